import Foundation
import SignetAuth
import SignetCurl
import SignetServer

/// `signet doctor`: a deployment checked from the outside (``Doctor``), or with `--offline` its
/// configuration alone. Exit 0 when nothing failed, 1 otherwise, 2 for a usage error.
enum DoctorCommand {
    static let usage = """
        usage: signet doctor --config signet.json [--resolve HOST:PORT:ADDR]... [--connect-to HOST:PORT:HOST2:PORT2]...
                             [--ca-file PEM] [--apple-cdn] [--google] [--json] [--offline]
        """

    static func run(_ args: [String]) -> Int32 {
        var given: String?
        let config: String
        var options = HTTPSOptions()
        var json = false
        var offline = false
        var appleCDN = false
        var google = false
        var words = CommandWords(args)
        do {
            while let flag = words.next() {
                switch flag {
                case "--config": given = try words.value(of: flag)
                case "--resolve": options.resolve.append(try words.value(of: flag))
                case "--connect-to": options.connectTo.append(try words.value(of: flag))
                case "--ca-file": options.caFile = try words.value(of: flag)
                case "--json": json = true
                case "--offline": offline = true
                case "--apple-cdn": appleCDN = true
                case "--google": google = true
                default: throw UsageProblem.unexpected(flag)
                }
            }
            config = try required(given, else: UsageProblem("--config is required: the deployment's own signet.json says what to check"))
        } catch {
            return usageError(usage, error)
        }
        let configuration: ServerConfiguration
        do {
            configuration = try ConfigurationLoader.load(file: config, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("signet doctor: \(error)\n".utf8))
            return 1
        }
        var doctor = Doctor(configuration: configuration, options: options)
        doctor.appleCDN = appleCDN
        doctor.google = google
        let checks = offline ? doctor.configurationChecks() : doctor.run()
        let failed = checks.filter { $0.status == .fail }
        if json {
            struct Report: Encodable {
                let ok: Bool
                let rp_id: String
                let checks: [DoctorCheck]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: (try? encoder.encode(Report(ok: failed.isEmpty, rp_id: configuration.rpID, checks: checks))) ?? Data(), as: UTF8.self))
        } else {
            print("signet doctor: \(configuration.rpID)\(offline ? " (configuration only)" : "")")
            for check in checks { print(check.line) }
            print(failed.isEmpty ? "\nall checks passed" : "\n\(failed.count) check(s) failed: \(failed.map(\.name).joined(separator: ", "))")
        }
        return failed.isEmpty ? 0 : 1
    }
}
