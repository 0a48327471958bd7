import Foundation
import SignetCrypto
import SignetWebAuthn

/// `signet verify registration|authentication FILE.json`: runs one response file through the
/// relying-party core and prints the verified result, or the exact step that failed.
enum VerifyCommand {
    static func run(_ args: [String]) -> Int32 {
        guard args.count >= 2, let ceremony = ResponseFile.Ceremony(rawValue: args[0]) else {
            return usageError("usage: signet verify registration|authentication FILE.json [--anchors PEM] [--now ISO8601]")
        }
        let path = args[1]
        var anchorsPath: String?
        var now = Date()
        var rest = args.dropFirst(2).makeIterator()
        while let flag = rest.next() {
            switch flag {
            case "--anchors":
                guard let value = rest.next() else { return usageError("--anchors needs a file") }
                anchorsPath = value
            case "--now":
                guard let value = rest.next(), let date = ResponseFile.parseDate(value) else { return usageError("--now needs an ISO-8601 time") }
                now = date
            default:
                return usageError("unknown option \(flag)")
            }
        }
        guard let data = FileManager.default.contents(atPath: path) else { return usageError("cannot read \(path)") }
        let file: ResponseFile
        do {
            file = try ResponseFile(json: [UInt8](data), ceremony: ceremony)
        } catch {
            return fail(error.reason.rawValue, error.detail)
        }
        // A trust anchor file named in the response is resolved against the folder that holds
        // registration/ (the fixtures' convention); --anchors overrides it.
        var anchors: [Certificate] = []
        let anchorFile = anchorsPath ?? file.trustAnchorPath(responsePath: path)
        if let anchorFile {
            guard let pem = try? String(contentsOfFile: anchorFile, encoding: .utf8) else { return usageError("cannot read trust anchors \(anchorFile)") }
            do {
                anchors = try Certificate.parsePEM(pem)
            } catch {
                return usageError("trust anchors in \(anchorFile) are not PEM certificates: \(error)")
            }
        }
        let result = file.verify(anchors: anchors, now: now)
        print(result.serialized)
        return result["ok"]?.bool == true ? 0 : 1
    }

    static func fail(_ reason: String, _ detail: String) -> Int32 {
        print(JSONValue.object(["ok": .bool(false), "reason": .string(reason), "detail": .string(detail), "step": .string("")]).serialized)
        return 1
    }
}

func usageError(_ message: String) -> Int32 {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    return 2
}
