import Foundation
import SignetCrypto
import SignetServer
import SignetWebAuthn

/// `signet verify registration|authentication FILE.json`: runs one response file through the
/// relying-party core and prints the verified result, or the exact step that failed.
enum VerifyCommand {
    static func run(_ args: [String]) -> Int32 {
        guard args.count >= 2, let ceremony = ResponseFile.Ceremony(rawValue: args[0]) else {
            return usageError("usage: signet verify registration|authentication FILE.json [--anchors PEM] [--metadata BLOB --metadata-root PEM] [--now ISO8601]")
        }
        let path = args[1]
        var anchorsPath: String?
        var metadataPaths: (blob: String?, root: String?)
        var now = Date()
        var rest = args.dropFirst(2).makeIterator()
        while let flag = rest.next() {
            switch flag {
            case "--anchors":
                guard let value = rest.next() else { return usageError("--anchors needs a file") }
                anchorsPath = value
            case "--metadata":
                guard let value = rest.next() else { return usageError("--metadata needs the Metadata Service's BLOB") }
                metadataPaths.blob = value
            case "--metadata-root":
                guard let value = rest.next() else { return usageError("--metadata-root needs the PEM root the BLOB is signed under") }
                metadataPaths.root = value
            case "--now":
                guard let value = rest.next(), let date = ResponseFile.parseDate(value) else { return usageError("--now needs an ISO-8601 time") }
                now = date
            default:
                return usageError("unknown option \(flag)")
            }
        }
        guard let data = try? BoundedFile.read(path, limit: 1 << 20) else { return usageError("cannot read \(path), or it is larger than 1 MiB") }
        let file: ResponseFile
        do {
            file = try ResponseFile(json: data, ceremony: ceremony)
        } catch {
            return fail(error.reason.rawValue, error.detail)
        }
        // The BLOB is checked as a server's start checks it, under its root now.
        var metadata: MetadataBLOB?
        switch metadataPaths {
        case (nil, nil): break
        case (let blob?, let root?):
            do {
                metadata = try SignetApp.attestationMetadata(blobFile: blob, rootFile: root, now: Date())
            } catch {
                return usageError("\(error)")
            }
        default: return usageError("--metadata and --metadata-root go together")
        }
        // A trust anchor file named in the response is resolved against the folder that holds
        // registration/ (the fixtures' convention); --anchors overrides it, and with --metadata
        // only --anchors is read: the BLOB gives the roots.
        var anchors: [Certificate] = []
        let anchorFile = anchorsPath ?? (metadata == nil ? file.trustAnchorPath(responsePath: path) : nil)
        if let anchorFile {
            guard let pem = try? BoundedFile.readText(anchorFile, limit: 1 << 20) else {
                return usageError("cannot read trust anchors \(anchorFile), or it is larger than 1 MiB")
            }
            do {
                anchors = try Certificate.parsePEM(pem)
            } catch {
                return usageError("trust anchors in \(anchorFile) are not PEM certificates: \(error)")
            }
        }
        let result = file.verify(anchors: anchors, metadata: metadata, now: now)
        print(result.serialized)
        return result["ok"]?.bool == true ? 0 : 1
    }

    static func fail(_ reason: String, _ detail: String) -> Int32 {
        print(JSONValue.object(["ok": .bool(false), "reason": .string(reason), "detail": .string(detail), "step": .string("")]).serialized)
        return 1
    }
}
