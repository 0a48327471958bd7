import SignetAuth
package import SignetCurl
import Foundation
import SignetWebAuthn

extension Doctor {
    static let aasaChecks = ["aasa.redirect", "aasa.status", "aasa.content_type", "aasa.json", "aasa.apps"]
    static let assetLinksChecks = ["assetlinks.redirect", "assetlinks.status", "assetlinks.content_type", "assetlinks.json", "assetlinks.relations",
                                   "assetlinks.fingerprints"]

    /// What every served JSON file must be: 200 without a redirect, `application/json`, JSON of
    /// bounded size. The parsed value, or the checks so far with the rest skipped.
    func servedJSON(_ prefix: String, _ path: String, _ result: Result<HTTPSResponse, CurlError>, names: [String], limit: Int) -> ([DoctorCheck], JSONValue?) {
        var checks: [DoctorCheck] = []
        func rest(_ reason: String) -> [DoctorCheck] { Self.skipped(names.filter { name in !checks.contains { $0.name == name } }, reason) }
        guard case .success(let response) = result else {
            if case .failure(let error) = result {
                checks.append(.fail(prefix + ".status", "https://\(rpID)\(path): \(error.message)", fix: "make https://\(rpID)\(path) answer 200"))
            }
            return (checks + rest("it could not be fetched"), nil)
        }
        if (300...399).contains(response.status) {
            checks.append(.fail(prefix + ".redirect", "\(response.status) to \(response.header("location") ?? "?")",
                                fix: "answer 200 at https://\(rpID)\(path) itself: Apple's and Google's fetchers do not follow redirects (nginx: `location = \(path)` before any `return 301`)"))
            return (checks + rest("it is behind a redirect"), nil)
        }
        checks.append(.pass(prefix + ".redirect", "no redirect"))
        guard response.status == 200 else {
            checks.append(.fail(prefix + ".status", "HTTP \(response.status)", fix: "serve https://\(rpID)\(path) with 200 (proxy it to Signet, which generates it)"))
            return (checks + rest("it is not served"), nil)
        }
        checks.append(.pass(prefix + ".status", "200"))
        let type = (response.header("content-type") ?? "none").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        checks.append(type == "application/json"
            ? .pass(prefix + ".content_type", "application/json")
            : .fail(prefix + ".content_type", "served as \(type.isEmpty ? "no Content-Type" : type)",
                    fix: "serve it as application/json: nginx `default_type application/json;` in its location (or proxy it to Signet)"))
        guard !response.truncated, response.body.count <= limit else {
            checks.append(.fail(prefix + ".json", "larger than \(limit / 1024) KiB", fix: "keep the file under \(limit / 1024) KiB"))
            return (checks + rest("it is too large"), nil)
        }
        guard let value = try? StrictJSON().parse(response.body) else {
            checks.append(.fail(prefix + ".json", "not valid JSON (\(response.body.count) bytes)", fix: "serve the JSON Signet generates at \(path), unchanged"))
            return (checks + rest("it is not JSON"), nil)
        }
        checks.append(.pass(prefix + ".json", "valid JSON, \(response.body.count) bytes"))
        return (checks, value)
    }

    /// apple-app-site-association: every configured `TEAMID.bundle` under `webcredentials.apps`.
    package func appleAssociation(_ result: Result<HTTPSResponse, CurlError>) -> [DoctorCheck] {
        var (checks, value) = servedJSON("aasa", "/.well-known/apple-app-site-association", result, names: Self.aasaChecks, limit: Self.aasaLimit)
        guard let value else { return checks }
        let served = Set(value["webcredentials"]?["apps"]?.array?.compactMap(\.string) ?? [])
        let missing = iosApps.filter { !served.contains($0) }
        checks.append(missing.isEmpty
            ? .pass("aasa.apps", "webcredentials lists \(iosApps.joined(separator: ", "))")
            : .fail("aasa.apps", "webcredentials.apps lacks \(missing.joined(separator: ", "))",
                    fix: "add \(missing.map { "\"\($0)\"" }.joined(separator: ", ")) to webcredentials.apps (Signet's own file lists every configured app)"))
        if let links = enrollmentLinkCheck(value) { checks.append(links) }
        return checks
    }

    /// The apps that open enrollment links (`enrollment_links`) need `/enroll` under `applinks`
    /// in the file of the issuer's host, where the links lead. Checked in the file served at the
    /// relying party's domain when that is the issuer's host; otherwise noted, since the links
    /// then lead to another host's file.
    func enrollmentLinkCheck(_ value: JSONValue) -> DoctorCheck? {
        let linking = configuration.clients.flatMap(\.iosApps).filter(\.enrollmentLinks).map(\.appID)
        guard !linking.isEmpty else { return nil }
        let host = issuerHost
        guard host == rpID else {
            return .note("aasa.enrollment_links", "enrollment links lead to \(host), not \(rpID): each app's Associated Domains needs applinks:\(host), where Signet serves /enroll under applinks for \(linking.joined(separator: ", "))")
        }
        let details = value["applinks"]?["details"]?.array ?? []
        let path = WellKnown.enrollmentPath(configuration)
        let served = Set(details.filter { detail in
            detail["components"]?.array?.contains { $0["/"]?.string == path && $0["exclude"] != .bool(true) } == true
        }.flatMap { ($0["appIDs"]?.array ?? []).compactMap(\.string) })
        let missing = linking.filter { !served.contains($0) }
        return missing.isEmpty
            ? .pass("aasa.enrollment_links", "applinks opens \(path) in \(linking.joined(separator: ", "))")
            : .fail("aasa.enrollment_links", "applinks does not give \(path) to \(missing.joined(separator: ", ")): enrollment links open the page, not the app",
                    fix: "serve Signet's own apple-app-site-association (it lists them), or add {\"appIDs\": [...], \"components\": [{\"/\": \"/enroll\"}]} under applinks.details")
    }

    /// assetlinks.json: for every configured package a statement with `get_login_creds` and every
    /// configured fingerprint; fingerprints served for it that the configuration lacks are named.
    package func assetLinks(_ result: Result<HTTPSResponse, CurlError>) -> [DoctorCheck] {
        var (checks, value) = servedJSON("assetlinks", "/.well-known/assetlinks.json", result, names: Self.assetLinksChecks, limit: 1 << 20)
        guard let value else { return checks }
        let all = value.array ?? []
        func statements(of package: String) -> [JSONValue] {
            all.filter { $0["target"]?["namespace"]?.string == "android_app" && $0["target"]?["package_name"]?.string == package }
        }
        let withoutLogin = androidApps.map(\.packageName).filter { package in
            !statements(of: package).contains { $0["relation"]?.array?.contains(.string("delegate_permission/common.get_login_creds")) == true }
        }
        checks.append(withoutLogin.isEmpty
            ? .pass("assetlinks.relations", "get_login_creds for \(androidApps.map(\.packageName).joined(separator: ", "))")
            : .fail("assetlinks.relations", "no delegate_permission/common.get_login_creds statement for \(withoutLogin.joined(separator: ", "))",
                    fix: "add the relation delegate_permission/common.get_login_creds for each app (Credential Manager needs it, handle_all_urls alone is not enough)"))
        var problems: [String] = []
        var fixes: [String] = []
        for app in androidApps {
            let served = Set(statements(of: app.packageName).flatMap { $0["target"]?["sha256_cert_fingerprints"]?.array?.compactMap(\.string) ?? [] }.map { $0.uppercased() })
            let configured = Set(app.fingerprints.map(WellKnown.fingerprintText))
            let missing = configured.subtracting(served).sorted()
            let unknown = served.subtracting(configured).sorted()
            if !missing.isEmpty {
                problems.append("\(app.packageName) lacks \(missing.joined(separator: ", "))")
                fixes.append("add \(missing.joined(separator: ", ")) to \(app.packageName)'s sha256_cert_fingerprints (with Play App Signing, the app-signing key's from Play Console)")
            }
            if !unknown.isEmpty {
                problems.append("\(app.packageName) serves \(unknown.joined(separator: ", ")), which the configuration lacks")
                fixes.append("add \(unknown.joined(separator: ", ")) to the client's android sha256_cert_fingerprints if it is yours (else remove it from the file), so Signet accepts its origin")
            }
        }
        checks.append(problems.isEmpty
            ? .pass("assetlinks.fingerprints", "every configured fingerprint is served, and no other")
            : .fail("assetlinks.fingerprints", problems.joined(separator: "; "), fix: fixes.joined(separator: "; ")))
        return checks
    }

    // MARK: discovery and keys

    /// The discovery document names the configured issuer; its JWKS has ES256 keys.
    func discovery() -> [DoctorCheck] {
        let url = configuration.issuer + "/.well-known/openid-configuration"
        guard case .success(let response) = fetch(url), response.status == 200, let document = try? StrictJSON().parse(response.body) else {
            return [.fail("discovery", "\(url) does not answer 200 with JSON", fix: "route \(configuration.issuer)/.well-known/ to Signet (the issuer must be Signet's public URL)"),
                    .skip("jwks", because: "no discovery document")]
        }
        guard document["issuer"]?.string == configuration.issuer else {
            return [.fail("discovery", "issuer is \(document["issuer"]?.string ?? "absent"), not \(configuration.issuer)",
                          fix: "set issuer in signet.json to the URL clients use, exactly (scheme, host, port, no trailing slash)"),
                    .skip("jwks", because: "the issuer does not match")]
        }
        var checks: [DoctorCheck] = [.pass("discovery", "issuer \(configuration.issuer)")]
        guard let jwks = document["jwks_uri"]?.string, case .success(let keys) = fetch(jwks), keys.status == 200,
              let set = try? StrictJSON().parse(keys.body), let list = set["keys"]?.array, !list.isEmpty else {
            checks.append(.fail("jwks", "\(document["jwks_uri"]?.string ?? "jwks_uri") does not answer 200 with a key set", fix: "route the jwks_uri to Signet"))
            return checks
        }
        let usable = list.filter { $0["kty"]?.string == "EC" && $0["crv"]?.string == "P-256" && $0["kid"]?.string != nil }
        checks.append(usable.isEmpty
            ? .fail("jwks", "no P-256 key with a kid among \(list.count)", fix: "serve Signet's own /.well-known/jwks.json unchanged")
            : .pass("jwks", "\(usable.count) ES256 key(s)"))
        return checks
    }

    // MARK: the configuration alone

    /// What the configuration alone tells: every web origin on the RP ID, the issuer's scheme,
    /// with closed sign-up how the accounts operators make are entered, and the Android reminder
    /// that the Play-signed app's certificate differs from the upload key.
    public func configurationChecks() -> [DoctorCheck] {
        var checks = [publicSuffixCheck()]
        let off = configuration.webOrigins.filter { origin in
            guard let url = URLComponents(string: origin), let host = url.host?.lowercased() else { return true }
            let secure = url.scheme == "https" || (url.scheme == "http" && (host == "localhost" || host == "127.0.0.1"))
            return !secure || !(host == rpID || host.hasSuffix("." + rpID))
        }
        checks.append(off.isEmpty
            ? .pass("origins", configuration.webOrigins.isEmpty ? "no web origins (apps only)" : "every web origin is on \(rpID) over https")
            : .fail("origins", "\(off.joined(separator: ", ")) \(off.count == 1 ? "is" : "are") not https on \(rpID) or a subdomain of it",
                    fix: "set relying_party.id to a registrable suffix of every origin's host, or drop the origin (WebAuthn §5.1.4: the RP ID must be the origin's host or its suffix)"))
        let issuer = URLComponents(string: configuration.issuer)
        let issuerOK = issuer?.scheme == "https" || issuer?.host == "localhost" || issuer?.host == "127.0.0.1"
        checks.append(issuerOK
            ? .pass("issuer", configuration.issuer)
            : .fail("issuer", "\(configuration.issuer) is not https", fix: "serve Signet over https and set issuer to that URL"))
        if !configuration.signUp {
            checks.append(configuration.email.canSend
                ? .pass("signup", "only operators make accounts; their owners get in with an email code, then add a passkey")
                : .note("signup", "only operators make accounts, and mail cannot go anywhere: their owners get in only by enrollment links (signet admin users enrollment-link)"))
        } else if !configuration.signUpDomains.isEmpty {
            // With signup_domains an account starts with an email code: without mail or code
            // sign-up, nobody can make one.
            let domains = configuration.signUpDomains.joined(separator: ", ")
            checks.append(!configuration.email.canSend
                ? .fail("signup", "signup_domains (\(domains)) makes accounts start with an email code, and mail cannot go anywhere: nobody can sign up",
                        fix: "set email.smtp_url, or remove signup_domains")
                : !configuration.passwordless.signup
                ? .fail("signup", "signup_domains (\(domains)) makes accounts start with an email code, and passwordless.signup is off: nobody can sign up",
                        fix: "turn passwordless.signup on, or remove signup_domains")
                : .pass("signup", "people at \(domains) make their own accounts, each starting with an email code"))
        }
        checks += permissionChecks()
        checks += clientPolicyChecks()
        checks += refreshRetryChecks()
        checks += attestationMetadataChecks()
        checks += backupChecks()
        for app in androidApps {
            checks.append(.note("android.\(app.packageName)", app.fingerprints.count == 1
                ? "one fingerprint configured: with Play App Signing, Play re-signs the app; configure the app-signing key's SHA-256 from Play Console → Test and release → App integrity (and keep the upload key's only for debug builds)"
                : "\(app.fingerprints.count) fingerprints configured: check one is Play's app-signing key (Play Console → App integrity)"))
        }
        return checks
    }

    /// A SQLite deployment's copies: none scheduled is noted; `backup.directory` must be a
    /// folder this machine's user can write (or make), its newest copy no older than two
    /// intervals and an hour (older, the copies have stopped: a full disk, a folder taken away),
    /// and one on the database's own file system is noted, since it does not survive the disk.
    /// PostgreSQL's are its own tools' business.
    func backupChecks(now: Date = Date()) -> [DoctorCheck] {
        guard configuration.database.hasPrefix("sqlite:") else { return [] }
        guard let folder = configuration.backupDirectory else {
            return [.note("backup", "no scheduled copies of the database: set backup.directory (a checked, sealed copy every day, the newest 7 kept), or run signet backup --seal from a timer")]
        }
        // The folder, or the nearest one above it that exists, where it would be made.
        var existing = folder
        while !FileManager.default.fileExists(atPath: existing), existing != "/", !existing.isEmpty {
            existing = (existing as NSString).deletingLastPathComponent
        }
        if existing.isEmpty { existing = "." }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: existing, isDirectory: &isFolder), isFolder.boolValue, access(existing, W_OK | X_OK) == 0 else {
            return [.fail("backup", "backup.directory \(folder) cannot be \(existing == folder ? "written" : "made") by this user (\(existing) is not a folder it may write)",
                          fix: "make \(folder) for the user signet runs as (mode 0700), or point backup.directory elsewhere")]
        }
        let hours = configuration.backupIntervalHours
        let newest = ScheduledBackup.copies(in: folder).last.flatMap(ScheduledBackup.time(of:))
        let age = newest.map { max(0, Int64(now.timeIntervalSince1970 * 1000) - $0) / 60_000 }
        if let age, age > Int64(2 * hours + 1) * 60 {
            return [.fail("backup", "the newest copy in \(folder) was made \(Self.span(minutes: age)) ago, more than twice backup.interval_hours (\(hours) h): the copies have stopped",
                          fix: "look for \"backup failed\" in the server's log (and signet_backups_total{outcome=\"failure\"} in /metrics): a full disk, or a folder the server may no longer write")]
        }
        let every = "a checked\(configuration.backupSeal ? ", sealed" : "") copy every \(hours) h into \(folder), the newest \(configuration.backupKeep) kept"
            + (configuration.backupSeal ? "" : " (backup.seal is off: each copy is readable by whoever reads the folder)")
            + (age.map { "; the newest made \(Self.span(minutes: $0)) ago" } ?? "; none made yet (a running server makes the first within a minute)")
        var database = stat(), copies = stat()
        let databaseFolder = (String(configuration.database.dropFirst("sqlite:".count)) as NSString).deletingLastPathComponent
        if stat(databaseFolder.isEmpty ? "." : databaseFolder, &database) == 0, stat(existing, &copies) == 0, database.st_dev == copies.st_dev {
            return [.note("backup", every + ", on the database's own file system: copy the folder off this machine too, or a lost disk takes both")]
        }
        return [.pass("backup", every)]
    }

    /// `minutes` in words, to the minute under two hours and to the hour after.
    static func span(minutes: Int64) -> String {
        minutes < 120 ? "\(minutes) min" : minutes < 48 * 60 ? "\(minutes / 60) h" : "\(minutes / 1440) days"
    }

    /// Each API of `tokens.permissions` and `tokens.api_token_ttl` must be an audience a client
    /// may ask a token for, or the setting never applies: no token carries the API's
    /// `permissions` claim (and an API that checks the claim refuses everyone), or its tokens
    /// live the deployment's lifetime. A misspelt audience is silent otherwise. A client kept in
    /// the database may name it, which the configuration cannot show: a note, not a failure.
    func permissionChecks() -> [DoctorCheck] {
        let askable = Set(configuration.audiences + configuration.clients.flatMap { $0.audiences ?? [] } + [configuration.accountAudience, configuration.managementAudience])
        let permissions = configuration.apiPermissions.keys.sorted().map { api in
            askable.contains(api)
                ? DoctorCheck.pass("permissions.\(api)", "\(configuration.apiPermissions[api]?.count ?? 0) permission(s); tokens for \(api) carry the account's")
                : .note("permissions.\(api)", "\(api) is not in audiences or a configured client's audiences: unless a client kept in the database names it, no token carries its permissions (a misspelt audience?)")
        }
        let lifetimes = configuration.apiTokenLifetimes.keys.sorted().map { api in
            askable.contains(api)
                ? DoctorCheck.pass("api_token_ttl.\(api)", "access tokens for \(api) live \(configuration.accessTokenLifetime(for: api)) s")
                : .note("api_token_ttl.\(api)", "\(api) is not in audiences or a configured client's audiences: unless a client kept in the database names it, no token has this lifetime (a misspelt audience?)")
        }
        return permissions + lifetimes
    }

    /// A client's `minimum_acr` that one of its grants can never reach: an email or recovery
    /// code, or another device's approval (the device grant), reaches no class, so the grant is
    /// refused every time. A note, since the client's other grants work; and `required_roles`,
    /// said once, since the roles live in the database this check does not read.
    func clientPolicyChecks() -> [DoctorCheck] {
        configuration.clients.compactMap { client in
            let never = [GrantNames.passwordlessOTP, GrantNames.recoveryCode, GrantNames.deviceCode].filter(client.grants.contains)
            if let acr = client.minimumACR, !never.isEmpty {
                return .note("client.\(client.id).minimum_acr", "minimum_acr \(acr) refuses every token of \(never.joined(separator: ", ")), which reach no class: take them out of grants, or the app will meet only refusals there")
            }
            if let roles = client.requiredRoles {
                return .note("client.\(client.id).required_roles", "only accounts with the role \(roles.joined(separator: " or ")) get its tokens; check the roles exist (signet admin roles list): a name no role has refuses everyone")
            }
            return nil
        }
    }

    /// A phone app's client (iOS or Android apps configured) that refreshes with no retry window:
    /// noted, since a phone that loses a refresh's answer is then signed out, and its owner mailed
    /// a reuse warning. Strict rotation stays the default; the note says what the window trades.
    func refreshRetryChecks() -> [DoctorCheck] {
        configuration.clients.compactMap { client in
            guard !client.iosApps.isEmpty || !client.androidApps.isEmpty, client.grants.contains(GrantNames.refreshToken),
                  (client.refreshTokenRetryWindow ?? configuration.refreshTokenRetryWindow) == 0 else { return nil }
            return .note("client.\(client.id).refresh_token_retry_window", "strict rotation: a phone that loses a refresh's answer (out of coverage mid-request) "
                + "is signed out, and its owner is mailed a reuse warning; refresh_token_retry_window 30 to 60 lets it send the refresh again, "
                + "while the token the lost answer carried, if shown later, still ends the session")
        }
    }

    // MARK: the platforms' own caches (internet)

    /// Apple's CDN copy of the file (what iOS actually reads, refreshed about daily).
    func appleCDNCheck() -> DoctorCheck {
        let url = "https://app-site-association.cdn-apple.com/a/v1/\(rpID)"
        guard case .success(let response) = fetch(url), response.status == 200, let value = try? StrictJSON().parse(response.body) else {
            return .fail("apple_cdn", "Apple's CDN has no file for \(rpID) (\(url))",
                         fix: "fix the aasa checks above, then wait: Apple's CDN fetches it again within about a day")
        }
        let served = Set(value["webcredentials"]?["apps"]?.array?.compactMap(\.string) ?? [])
        let missing = iosApps.filter { !served.contains($0) }
        return missing.isEmpty
            ? .pass("apple_cdn", "Apple's CDN lists \(iosApps.joined(separator: ", "))")
            : .fail("apple_cdn", "Apple's CDN copy lacks \(missing.joined(separator: ", "))", fix: "wait for the CDN to refresh (about a day), or use developer mode (?mode=developer) while testing")
    }

    /// Google's Digital Asset Links API, asked as Credential Manager asks.
    func googleCheck() -> DoctorCheck {
        let url = "https://digitalassetlinks.googleapis.com/v1/statements:list?source.web.site=https://\(rpID)&relation=delegate_permission/common.get_login_creds"
        guard case .success(let response) = fetch(url), response.status == 200, let value = try? StrictJSON().parse(response.body) else {
            return .fail("google", "Google's statements API did not answer for \(rpID)", fix: "fix the assetlinks checks above and try again")
        }
        let packages = Set((value["statements"]?.array ?? []).compactMap { $0["target"]?["androidApp"]?["packageName"]?.string })
        let missing = androidApps.map(\.packageName).filter { !packages.contains($0) }
        return missing.isEmpty
            ? .pass("google", "Google sees get_login_creds for every app")
            : .fail("google", "Google does not see \(missing.joined(separator: ", "))", fix: "fix assetlinks.json; Google's cache refreshes within hours")
    }
}
