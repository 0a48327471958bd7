import Foundation

/// One finding of `signet doctor`: a named check, what it saw, and for a failure the one-line fix.
public struct DoctorCheck: Sendable, Equatable, Encodable {
    public enum Status: String, Sendable, Encodable {
        case pass, fail, skip
        /// Information an operator should read, not a failure (the Play app-signing reminder).
        case note
    }
    /// Stable names (`aasa.content_type`), for scripts and tests.
    public let name: String
    public let status: Status
    public let detail: String
    public let fix: String?

    static func pass(_ name: String, _ detail: String) -> DoctorCheck { DoctorCheck(name: name, status: .pass, detail: detail, fix: nil) }
    static func fail(_ name: String, _ detail: String, fix: String) -> DoctorCheck { DoctorCheck(name: name, status: .fail, detail: detail, fix: fix) }
    static func skip(_ name: String, because reason: String) -> DoctorCheck { DoctorCheck(name: name, status: .skip, detail: "not checked: \(reason)", fix: nil) }
    static func note(_ name: String, _ detail: String) -> DoctorCheck { DoctorCheck(name: name, status: .note, detail: detail, fix: nil) }

    /// `✓ name  detail`, and for a failure `    fix: ...` below it.
    public var line: String {
        let mark = switch status {
        case .pass: "✓"
        case .fail: "✗"
        case .skip: "–"
        case .note: "ℹ"
        }
        return "\(mark) \(name.padding(toLength: 26, withPad: " ", startingAt: 0)) \(detail)" + (fix.map { "\n    fix: \($0)" } ?? "")
    }
}
