public import SignetAuth
public import SignetCurl
import Foundation
import SignetWebAuthn

/// `signet doctor` (DESIGN.md, "Management API and operations"): checks a live deployment from
/// the outside the way Apple's and Google's fetchers and the browsers see it, and the
/// configuration itself; every failure comes with the fix. The checks that passkey deployments
/// most often get wrong are the association files: served with the wrong type, behind a
/// redirect, on `www.` only, without the Play app-signing fingerprint.
public struct Doctor: Sendable {
    public let configuration: ServerConfiguration
    public let options: HTTPSOptions
    /// Also ask Apple's CDN and Google's Digital Asset Links API (they need the internet).
    public var appleCDN = false
    public var google = false

    public init(configuration: ServerConfiguration, options: HTTPSOptions) {
        self.configuration = configuration
        self.options = options
    }

    /// Apple's limit for an apple-app-site-association file, uncompressed.
    static let aasaLimit = 128 * 1024

    var rpID: String { configuration.rpID }
    /// The issuer's host, in lower case: where Signet's own pages and links are.
    var issuerHost: String { URLComponents(string: configuration.issuer)?.host?.lowercased() ?? "" }
    var iosApps: [String] { configuration.clients.flatMap(\.iosApps).map(\.appID) }
    var androidApps: [ClientConfiguration.AndroidApp] { configuration.clients.flatMap(\.androidApps) }

    /// Every check: the configuration's, then the live ones.
    public func run() -> [DoctorCheck] {
        var checks = configurationChecks()
        let apex = fetch("https://\(rpID)/.well-known/apple-app-site-association")
        let links = fetch("https://\(rpID)/.well-known/assetlinks.json")
        checks.append(tls(apex))
        let tlsFailed = checks.last?.status == .fail
        let host = tlsFailed ? DoctorCheck.skip("host", because: "TLS failed") : hostCheck(apex, links)
        checks.append(host)
        let reason = tlsFailed ? "TLS failed" : "the files are not on \(rpID)"
        let reachable = !tlsFailed && host.status != .fail
        if !iosApps.isEmpty { checks += reachable ? appleAssociation(apex) : Self.skipped(Self.aasaChecks, reason) }
        if !androidApps.isEmpty { checks += reachable ? assetLinks(links) : Self.skipped(Self.assetLinksChecks, reason) }
        // The issuer on the RP ID's host shares its certificate: one TLS failure, reported once.
        if tlsFailed, issuerHost == rpID {
            checks += Self.skipped(["discovery", "jwks"], "TLS failed")
        } else {
            checks += discovery()
        }
        checks.append(reachable ? passkeyEndpointsCheck() : DoctorCheck.skip("passkey_endpoints", because: reason))
        if appleCDN, !iosApps.isEmpty { checks.append(appleCDNCheck()) }
        if google, !androidApps.isEmpty { checks.append(googleCheck()) }
        return checks + backchannelChecks() + clientKeyChecks() + metadataURLCheck() + metadataFileRevocationCheck()
    }

    static func skipped(_ names: [String], _ reason: String) -> [DoctorCheck] { names.map { DoctorCheck.skip($0, because: reason) } }

    /// A GET, or the libcurl error it ended with.
    func fetch(_ url: String) -> Result<HTTPSResponse, CurlError> {
        do { return .success(try HTTPS.get(url, options: options)) } catch { return .failure(error) }
    }

    // MARK: TLS and host

    func tls(_ result: Result<HTTPSResponse, CurlError>) -> DoctorCheck {
        switch result {
        case .success: return .pass("tls", "the certificate of \(rpID) verifies and names it")
        case .failure(let error) where HTTPS.certificateErrors.contains(error.code):
            return .fail("tls", "https://\(rpID): \(error.message)",
                         fix: "serve a certificate whose subjectAltName includes \(rpID), with its full chain (the leaf and every intermediate)")
        case .failure(let error):
            return .fail("tls", "cannot reach https://\(rpID): \(error.message)",
                         fix: "make https://\(rpID) answer on port 443 from the internet (DNS, firewall, the server's listener)")
        }
    }

    /// The files must be on the RP ID's own host: Apple and Google fetch exactly
    /// `https://{rp_id}/.well-known/...`, never a `www.` variant.
    func hostCheck(_ apex: Result<HTTPSResponse, CurlError>, _ links: Result<HTTPSResponse, CurlError>) -> DoctorCheck {
        let missing = [apex, links].allSatisfy { (try? $0.get().status) == 404 }
        guard missing else { return .pass("host", "\(rpID) answers for its association files") }
        if rpID.hasPrefix("www.") { return .fail("host", "\(rpID) has no association files", fix: "serve them on \(rpID)") }
        let www = ["apple-app-site-association", "assetlinks.json"].contains { file in
            (try? fetch("https://www.\(rpID)/.well-known/\(file)").get().status) == 200
        }
        return www
            ? .fail("host", "the files are on www.\(rpID) only; \(rpID) answers 404",
                    fix: "serve /.well-known/ on \(rpID) itself (the RP ID), not only on www.\(rpID): Apple and Google fetch the exact host")
            : .fail("host", "\(rpID) answers 404 for both association files",
                    fix: "serve /.well-known/apple-app-site-association and /.well-known/assetlinks.json on \(rpID) (proxy them to Signet)")
    }
}
