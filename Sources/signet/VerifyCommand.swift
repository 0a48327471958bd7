import Foundation
import SignetCrypto
import SignetServer
import SignetWebAuthn

/// `signet verify registration|authentication FILE.json`: runs one response file through the
/// relying-party core and prints the verified result, or the exact step that failed.
enum VerifyCommand {
    static func run(_ args: [String]) -> Int32 {
        let usage = "usage: signet verify registration|authentication FILE.json [--anchors PEM] [--metadata BLOB --metadata-root PEM] [--now ISO8601]"
        guard let first = args.first, let ceremony = ResponseFile.Ceremony(rawValue: first) else {
            return usageError(usage, args.first.map { UsageProblem("registration or authentication, not \"\($0)\"") } ?? UsageProblem("which ceremony?"))
        }
        guard args.count >= 2 else { return usageError(usage, UsageProblem("the response file is missing")) }
        let path = args[1]
        var anchorsPath: String?
        var metadataPaths: (blob: String?, root: String?)
        var now = Date()
        var words = CommandWords(args.dropFirst(2))
        do {
            while let flag = words.next() {
                switch flag {
                case "--anchors": anchorsPath = try words.value(of: flag)
                case "--metadata": metadataPaths.blob = try words.value(of: flag)
                case "--metadata-root": metadataPaths.root = try words.value(of: flag)
                case "--now":
                    let value = try words.value(of: flag)
                    guard let date = ResponseFile.parseDate(value) else { throw UsageProblem("--now needs an ISO-8601 time, like 2026-01-31T12:00:00Z, not \"\(value)\"") }
                    now = date
                default: throw UsageProblem.unexpected(flag)
                }
            }
        } catch {
            return usageError(usage, error)
        }
        guard let data = try? BoundedFile.read(path, limit: 1 << 20) else {
            return refused("cannot read \(path), or it is larger than 1 MiB")
        }
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
                return refused("\(error)")
            }
        default: return usageError(usage, UsageProblem("--metadata and --metadata-root go together"))
        }
        // A trust anchor file named in the response is resolved against the folder that holds
        // registration/ (the fixtures' convention); --anchors overrides it, and with --metadata
        // only --anchors is read: the BLOB gives the roots.
        var anchors: [Certificate] = []
        let anchorFile = anchorsPath ?? (metadata == nil ? file.trustAnchorPath(responsePath: path) : nil)
        if let anchorFile {
            guard let pem = try? BoundedFile.readText(anchorFile, limit: 1 << 20) else {
                return refused("cannot read trust anchors \(anchorFile), or it is larger than 1 MiB")
            }
            do {
                anchors = try Certificate.parsePEM(pem)
            } catch {
                return refused("trust anchors in \(anchorFile) are not PEM certificates: \(error)")
            }
        }
        let result = file.verify(anchors: anchors, metadata: metadata, now: now)
        print(result.serialized)
        return result["ok"]?.bool == true ? 0 : 1
    }

    /// A file that cannot be used, said on standard error with status 2: nothing was verified.
    static func refused(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("signet verify: \(message)\n".utf8))
        return 2
    }

    static func fail(_ reason: String, _ detail: String) -> Int32 {
        print(JSONValue.object(["ok": .bool(false), "reason": .string(reason), "detail": .string(detail), "step": .string("")]).serialized)
        return 1
    }
}
