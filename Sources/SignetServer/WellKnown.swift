import Foundation
import SignetAuth
import SignetWebAuthn
import SignetWeb

/// Documents served under `/.well-known/`, made once from the configuration.
enum WellKnown {
    /// `apple-app-site-association` with the `webcredentials` service (Apple: "Supporting
    /// associated domains"): every iOS app as `TEAMID.bundle.id`; and, for the apps that open
    /// enrollment links (`enrollment_links`), the `applinks` service with the one path `/enroll`
    /// (Apple: `applinks.Details`, its `appIDs` and `components`), so nothing else of Signet's
    /// opens an app.
    static func appleAppSiteAssociation(_ c: ServerConfiguration) -> JSONValue {
        let apps = c.clients.flatMap(\.iosApps)
        var file: JSONObject = ["webcredentials": .object(["apps": .array(apps.map { .string($0.appID) })])]
        let linking = apps.filter(\.enrollmentLinks).map { JSONValue.string($0.appID) }
        if !linking.isEmpty {
            file["applinks"] = .object(["details": .array([.object([
                "appIDs": .array(linking),
                "components": .array([.object(["/": .string(enrollmentPath(c)), "comment": .string("an operator's enrollment link: the app adds the account's first passkey")])]),
            ])])])
        }
        return .object(file)
    }

    /// The path an enrollment link leads to (``Ceremonies/createEnrollmentLink(userID:lifetime:by:context:)``):
    /// `/enroll` under the issuer's own path, if it has one.
    static func enrollmentPath(_ c: ServerConfiguration) -> String {
        var path = URLComponents(string: c.issuer)?.path ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        return path + "/enroll"
    }

    /// Digital Asset Links `assetlinks.json`: one statement per Android app, with both relations
    /// Credential Manager needs and every signing certificate fingerprint (`AB:CD:...`).
    static func assetLinks(_ c: ServerConfiguration) -> JSONValue {
        .array(c.clients.flatMap(\.androidApps).map { app in
            .object([
                "relation": .array([.string("delegate_permission/common.handle_all_urls"), .string("delegate_permission/common.get_login_creds")]),
                "target": .object([
                    "namespace": .string("android_app"), "package_name": .string(app.packageName),
                    "sha256_cert_fingerprints": .array(app.fingerprints.map { .string(fingerprintText($0)) }),
                ]),
            ])
        })
    }

    /// `passkey-endpoints` (W3C, A Well-Known URL for Relying Party Passkey Endpoints §3.1):
    /// where a password manager sends someone to make a passkey (`enroll`: the hosted pages'
    /// offer, after a sign-in if need be) and to see and remove theirs (`manage`: the account
    /// page's passkeys).
    static func passkeyEndpoints(_ c: ServerConfiguration) -> JSONValue {
        .object(["enroll": .string(c.issuer + "/account/passkey-offer"), "manage": .string(c.issuer + "/account#h-passkeys")])
    }

    static func fingerprintText(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// OpenID Provider metadata (OIDC Discovery §3).
    static func openIDConfiguration(_ c: ServerConfiguration) -> JSONValue {
        let i = c.issuer
        return .object([
            "issuer": .string(i), "authorization_endpoint": .string(i + "/authorize"), "end_session_endpoint": .string(i + "/logout"),
            "code_challenge_methods_supported": .array([.string("S256")]), "response_modes_supported": .array([.string("query")]),
            "prompt_values_supported": .array((["none", "login", "select_account", "consent"] + (c.signUp ? ["create"] : [])).map(JSONValue.string)),
            "authorization_response_iss_parameter_supported": .bool(true), "ui_locales_supported": .array(Strings.languages.map(JSONValue.string)),
            // Both said outright: omitted, request_uri_parameter_supported would mean true (OIDC Discovery §3).
            "request_parameter_supported": .bool(false), "request_uri_parameter_supported": .bool(false),
            "token_endpoint": .string(i + "/oauth/token"), "userinfo_endpoint": .string(i + "/userinfo"),
            "jwks_uri": .string(i + "/.well-known/jwks.json"), "revocation_endpoint": .string(i + "/oauth/revoke"),
            "device_authorization_endpoint": .string(i + "/oauth/device/code"), "introspection_endpoint": .string(i + "/oauth/introspect"),
            // RFC 9126 §5: pushed authorization requests, required of every client when the
            // deployment says so (else of the clients configured so).
            "pushed_authorization_request_endpoint": .string(i + "/oauth/par"),
            "require_pushed_authorization_requests": .bool(c.requirePushedRequests),
            "grant_types_supported": .array(GrantNames.known.map(JSONValue.string)),
            "dpop_signing_alg_values_supported": .array(DPoP.algorithms.map(JSONValue.string)),
            "response_types_supported": .array([.string("code")]), "subject_types_supported": .array([.string("public")]),
            "id_token_signing_alg_values_supported": .array([.string("ES256")]),
            // OIDC Core §9 (`private_key_jwt`) besides secrets; OIDC Discovery §3 for the algorithms.
            "token_endpoint_auth_methods_supported": .array(["none", "client_secret_basic", "client_secret_post", "private_key_jwt"].map(JSONValue.string)),
            "token_endpoint_auth_signing_alg_values_supported": .array(ClientAssertion.algorithms.map(JSONValue.string)),
            "revocation_endpoint_auth_methods_supported": .array(["none", "client_secret_basic", "client_secret_post", "private_key_jwt"].map(JSONValue.string)),
            "revocation_endpoint_auth_signing_alg_values_supported": .array(ClientAssertion.algorithms.map(JSONValue.string)),
            "introspection_endpoint_auth_methods_supported": .array(["client_secret_basic", "client_secret_post", "private_key_jwt"].map(JSONValue.string)),
            "introspection_endpoint_auth_signing_alg_values_supported": .array(ClientAssertion.algorithms.map(JSONValue.string)),
            "scopes_supported": .array(Ceremonies.knownScopes.map(JSONValue.string)),
            "acr_values_supported": .array(AuthenticationContext.supported.map(JSONValue.string)),
            // OpenID Connect Back-Channel Logout 1.0 §2.1: logout tokens, always with `sid`.
            "backchannel_logout_supported": .bool(true), "backchannel_logout_session_supported": .bool(true),
            "claims_supported": .array(["sub", "iss", "aud", "exp", "iat", "auth_time", "acr", "amr", "nonce", "sid", "email", "email_verified", "name"].map(JSONValue.string)),
        ])
    }
}
