/// Versioned schema migrations, applied in order at start-up. Each runs once, in a transaction
/// together with its row in `schema_migrations` (except PostgreSQL's index builds in
/// ``builtConcurrently``). Types are chosen to mean the same in SQLite and PostgreSQL: BIGINT
/// times in milliseconds since 1970, BYTEA/BLOB for bytes.
enum Schema {
    /// - Parameter clustered: the suffix that makes a table a clustered index on its primary key
    ///   (SQLite `WITHOUT ROWID`): an insert or update then writes one B-tree page, not two.
    /// - Parameter serial: an auto-incrementing integer primary key.
    /// - Parameter sqlite: whether the SQL is for SQLite (migration 3 exists only there).
    static func migrations(blob: String, clustered: String = "", serial: String, sqlite: Bool = false) -> [(version: Int, sql: String)] {
        [
            (1, """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                handle \(blob) NOT NULL UNIQUE,
                email TEXT NOT NULL UNIQUE,
                name TEXT,
                email_verified INTEGER NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL
            );
            CREATE TABLE credentials (
                id \(blob) PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                public_key \(blob) NOT NULL,
                algorithm INTEGER NOT NULL,
                sign_count BIGINT NOT NULL,
                aaguid TEXT NOT NULL,
                format TEXT NOT NULL,
                backup_eligible INTEGER NOT NULL,
                backup_state INTEGER NOT NULL,
                transports TEXT NOT NULL,
                name TEXT,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT,
                revoked_at BIGINT
            )\(clustered);
            CREATE INDEX credentials_user ON credentials(user_id);
            CREATE TABLE used_sessions (
                id \(blob) PRIMARY KEY,
                expires_at BIGINT NOT NULL
            )\(clustered);
            CREATE TABLE refresh_tokens (
                hash \(blob) PRIMARY KEY,
                family TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                scope TEXT NOT NULL,
                auth_time BIGINT NOT NULL,
                amr TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                used_at BIGINT,
                revoked_at BIGINT
            )\(clustered);
            CREATE INDEX refresh_tokens_family ON refresh_tokens(family);
            CREATE TABLE signing_keys (
                kid TEXT PRIMARY KEY,
                algorithm TEXT NOT NULL,
                private_key \(blob) NOT NULL,
                public_key \(blob) NOT NULL,
                created_at BIGINT NOT NULL,
                retired_at BIGINT
            );
            CREATE TABLE audit_events (
                id \(serial),
                at BIGINT NOT NULL,
                kind TEXT NOT NULL,
                outcome TEXT NOT NULL,
                reason TEXT,
                user_id TEXT,
                client_id TEXT,
                credential_id TEXT,
                remote TEXT,
                request_id TEXT
            );
            """),
            (2, """
            CREATE TABLE device_keys (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                device_id TEXT NOT NULL,
                platform TEXT NOT NULL,
                name TEXT,
                public_key \(blob) NOT NULL,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT,
                revoked_at BIGINT
            );
            CREATE INDEX device_keys_user ON device_keys(user_id);
            CREATE TABLE action_challenges (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                device_key_id TEXT,
                challenge \(blob) NOT NULL,
                action_hash \(blob) NOT NULL,
                action TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                used_at BIGINT
            );
            CREATE INDEX action_challenges_user ON action_challenges(user_id, created_at);
            """),
            // SQLite's AUTOINCREMENT updates the sqlite_sequence table at every insert: one more
            // page in every sign-in's commit. Audit rows are never deleted, so a plain rowid key
            // never reuses a number either. PostgreSQL's BIGSERIAL has no such cost.
            (3, sqlite ? """
            CREATE TABLE audit_events_v3 (
                id INTEGER PRIMARY KEY,
                at BIGINT NOT NULL,
                kind TEXT NOT NULL,
                outcome TEXT NOT NULL,
                reason TEXT,
                user_id TEXT,
                client_id TEXT,
                credential_id TEXT,
                remote TEXT,
                request_id TEXT
            );
            INSERT INTO audit_events_v3 (id, at, kind, outcome, reason, user_id, client_id, credential_id, remote, request_id)
                SELECT id, at, kind, outcome, reason, user_id, client_id, credential_id, remote, request_id FROM audit_events;
            DROP TABLE audit_events;
            ALTER TABLE audit_events_v3 RENAME TO audit_events;
            DELETE FROM sqlite_sequence WHERE name = 'audit_events'
            """ : ""),
            // Why a refusal happened, in the words of the step that refused it (the verification
            // detail that the client's answer no longer carries).
            (4, "ALTER TABLE audit_events ADD COLUMN detail TEXT"),
            // The credential that started a refresh-token family (base64url of a passkey ID, or a
            // device key ID): revoking it ends the family. And counters of rate-limit windows.
            (5, """
            ALTER TABLE refresh_tokens ADD COLUMN credential_id TEXT;
            CREATE TABLE rate_counters (
                bucket TEXT NOT NULL,
                key \(blob) NOT NULL,
                window_start BIGINT NOT NULL,
                count BIGINT NOT NULL,
                PRIMARY KEY (bucket, key)
            )\(clustered)
            """),
            // Email codes (one per address, the newest), the outbox, recovery codes and
            // recoveries; the language of an account's mail; which recovery added a credential.
            (6, """
            ALTER TABLE users ADD COLUMN locale TEXT;
            ALTER TABLE credentials ADD COLUMN recovery_id TEXT;
            ALTER TABLE device_keys ADD COLUMN recovery_id TEXT;
            CREATE TABLE email_codes (
                email TEXT PRIMARY KEY,
                id TEXT NOT NULL,
                code_hash \(blob) NOT NULL,
                client_id TEXT NOT NULL,
                attempts INTEGER NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            )\(clustered);
            CREATE TABLE outbox (
                id TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                recipient TEXT NOT NULL,
                message \(blob) NOT NULL,
                created_at BIGINT NOT NULL,
                due_at BIGINT NOT NULL,
                expires_at BIGINT,
                attempts INTEGER NOT NULL,
                claimed_until BIGINT NOT NULL,
                last_error TEXT
            );
            CREATE INDEX outbox_due ON outbox(due_at);
            CREATE TABLE recovery_codes (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                code_hash \(blob) NOT NULL,
                created_at BIGINT NOT NULL,
                used_at BIGINT,
                PRIMARY KEY (user_id, code_hash)
            )\(clustered);
            CREATE TABLE recoveries (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                opened_at BIGINT NOT NULL,
                hold_until BIGINT NOT NULL,
                session TEXT,
                state TEXT NOT NULL,
                closed_at BIGINT
            );
            CREATE INDEX recoveries_user ON recoveries(user_id, state);
            CREATE INDEX recoveries_session ON recoveries(session)
            """),
            // Administration: blocked accounts, sessions ended by an administrator (every session
            // that started before `sessions_revoked_at`: one write, checked where the account row
            // is read anyway, instead of an index on refresh tokens that every sign-in would pay
            // for), what an administrator sees of an account's use (a passkey's uses are counted in
            // the row its use already updates, so a sign-in writes no other page), and clients
            // kept in the database.
            (7, """
            ALTER TABLE users ADD COLUMN blocked INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE users ADD COLUMN sessions_revoked_at BIGINT;
            ALTER TABLE users ADD COLUMN updated_at BIGINT;
            ALTER TABLE users ADD COLUMN last_login BIGINT;
            ALTER TABLE users ADD COLUMN logins_count BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE credentials ADD COLUMN use_count BIGINT NOT NULL DEFAULT 0;
            CREATE TABLE clients (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                type TEXT NOT NULL,
                secret_hash \(blob),
                grants TEXT NOT NULL,
                scopes TEXT NOT NULL,
                redirect_uris TEXT NOT NULL,
                audiences TEXT,
                created_at BIGINT NOT NULL
            )
            """),
            // DPoP (RFC 9449 §5): the key a refresh token is bound to.
            (8, "ALTER TABLE refresh_tokens ADD COLUMN jkt TEXT"),
            // The device authorization grant (RFC 8628).
            (9, """
            CREATE TABLE device_codes (
                hash \(blob) PRIMARY KEY,
                user_code TEXT NOT NULL UNIQUE,
                client_id TEXT NOT NULL,
                scope TEXT NOT NULL,
                remote TEXT NOT NULL,
                user_agent TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                poll_interval INTEGER NOT NULL,
                last_poll_at BIGINT,
                slowed INTEGER NOT NULL DEFAULT 0,
                status TEXT NOT NULL,
                user_id TEXT,
                approved_by TEXT
            )
            """),
            // The web (DESIGN.md, "The web"): SSO sessions and authorization codes.
            (10, """
            CREATE TABLE web_sessions (
                hash \(blob) PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                user_id TEXT NOT NULL,
                auth_time BIGINT NOT NULL,
                amr TEXT NOT NULL,
                credential_id TEXT,
                created_at BIGINT NOT NULL,
                last_seen_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                revoked_at BIGINT,
                user_agent TEXT,
                remote TEXT NOT NULL
            );
            CREATE INDEX web_sessions_user ON web_sessions(user_id);
            CREATE TABLE authorization_codes (
                hash \(blob) PRIMARY KEY,
                client_id TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                code_challenge TEXT,
                nonce TEXT,
                scope TEXT NOT NULL,
                audience TEXT,
                user_id TEXT NOT NULL,
                auth_time BIGINT NOT NULL,
                amr TEXT NOT NULL,
                credential_id TEXT,
                family TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            )
            """),
            // Addresses in NFC, as sign-up keys them since: a data step only
            // (``SQLStore/dataMigrations``).
            (11, ""),
            // Sessions ended by revocation (RFC 7009 §2.1), kept while an access token of theirs
            // can still be valid: a session without a refresh token has no other row to mark.
            (12, """
            CREATE TABLE ended_sessions (
                sid TEXT PRIMARY KEY,
                ended_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            )\(clustered)
            """),
            // Keys sealed under the key-encryption key: its check, and earlier ones' code keys.
            (13, """
            CREATE TABLE sealed_keys (
                name TEXT PRIMARY KEY,
                sealed \(blob) NOT NULL,
                created_at BIGINT NOT NULL
            )
            """),
            // The code key each recovery code was made under, so that a re-key keeps only the
            // earlier keys an unused code still needs. NULL for codes made before.
            (14, "ALTER TABLE recovery_codes ADD COLUMN key_id TEXT"),
            // PostgreSQL: an account's own audit rows, newest first (its account page, the
            // Management API's logs of a user), and its refresh tokens (where it is signed in,
            // the sessions a revoked passkey started, deleting it), found without reading every
            // account's. Rows without an account stay out. Not on SQLite, where each index costs
            // every sign-in a page written at random (measured: +25k instructions and about +46
            // us a sign-in for the two); there those reads run on a connection of their own
            // instead, so they never hold up a writer (``SQLitePool``).
            // Built without blocking writes (``builtConcurrently``).
            (15, sqlite ? "" : "CREATE INDEX CONCURRENTLY audit_events_user ON audit_events(user_id, id) WHERE user_id IS NOT NULL"),
            (16, sqlite ? "" : "CREATE INDEX CONCURRENTLY refresh_tokens_user ON refresh_tokens(user_id)"),
            // The DPoP key an authorization code is bound to (RFC 9449 §10), NULL for one that is not.
            (17, "ALTER TABLE authorization_codes ADD COLUMN dpop_jkt TEXT"),
            // Whether a passkey's attestation chained to a trust anchor at registration; 0 for
            // every passkey registered before (none was recorded as such).
            (18, "ALTER TABLE credentials ADD COLUMN attested INTEGER NOT NULL DEFAULT 0"),
            // The credential that approved the device that enrolled a device key (RFC 8628).
            (19, "ALTER TABLE device_keys ADD COLUMN approved_by TEXT"),
            // OpenID Connect Back-Channel Logout 1.0: the browser session a code was issued to,
            // the sessions whose clients want a logout token when they end, and the logout URIs
            // of clients kept in the database. And the trust anchor a passkey's attestation chained
            // to, so that removing the anchor takes its passkeys' hardware mark.
            (20, """
            ALTER TABLE authorization_codes ADD COLUMN web_session TEXT;
            ALTER TABLE clients ADD COLUMN post_logout_redirect_uris TEXT;
            ALTER TABLE clients ADD COLUMN backchannel_logout_uri TEXT;
            ALTER TABLE credentials ADD COLUMN attestation_root \(blob);
            CREATE TABLE logout_subscriptions (
                sid TEXT PRIMARY KEY,
                client_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                credential_id \(blob),
                web_session TEXT,
                offline INTEGER NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            );
            CREATE INDEX logout_subscriptions_user ON logout_subscriptions(user_id);
            CREATE INDEX logout_subscriptions_web_session ON logout_subscriptions(web_session);
            CREATE INDEX logout_subscriptions_expiry ON logout_subscriptions(expires_at)
            """),
            // The public keys (a JWK Set, as JSON text) of a client kept in the database that
            // authenticates with `private_key_jwt` (OIDC Core §9), NULL for the others; and
            // whether its authorization requests must be pushed (RFC 9126 §6).
            (21, """
            ALTER TABLE clients ADD COLUMN jwks TEXT;
            ALTER TABLE clients ADD COLUMN require_par INTEGER NOT NULL DEFAULT 0
            """),
            // Where a `private_key_jwt` client publishes its public keys instead (`jwks_uri`,
            // OIDC Dynamic Client Registration §2), NULL for the others.
            (22, "ALTER TABLE clients ADD COLUMN jwks_uri TEXT"),
            // An account whose owner turned sign-in by email code off: codes neither go out nor
            // sign in (its passkeys and recovery codes still do).
            (23, "ALTER TABLE users ADD COLUMN email_sign_in_off INTEGER NOT NULL DEFAULT 0"),
            // Log streams (`/api/v2/log-streams`): where the audit log is POSTed as it grows.
            // `last_log_id` is the last audit event the endpoint took; the purge keeps every later one while the
            // stream is active. `authorization` is the header's value sealed under the
            // key-encryption key; `filters`, the categories sent, space-separated (NULL: every event).
            // One instance sends a stream at a time: the one whose lease holds.
            (24, """
            CREATE TABLE log_streams (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                status TEXT NOT NULL,
                endpoint TEXT NOT NULL,
                content_type TEXT NOT NULL,
                content_format TEXT NOT NULL,
                filters TEXT,
                authorization_sealed \(blob),
                created_at BIGINT NOT NULL,
                last_log_id BIGINT NOT NULL,
                failures INTEGER NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL DEFAULT 0,
                last_error TEXT,
                last_delivered_at BIGINT,
                lease_owner TEXT,
                lease_until BIGINT NOT NULL DEFAULT 0
            )
            """),
            // Auth0's app_metadata (the operators') and user_metadata (the owner's): JSON objects
            // as text, NULL for none. No sign-in reads them.
            (25, """
            ALTER TABLE users ADD COLUMN app_metadata TEXT;
            ALTER TABLE users ADD COLUMN user_metadata TEXT
            """),
            // Where each refresh token was made (the sign-in's or the refresh's address and
            // User-Agent): an app's session shows where it started and was last seen.
            (26, """
            ALTER TABLE refresh_tokens ADD COLUMN remote TEXT;
            ALTER TABLE refresh_tokens ADD COLUMN user_agent TEXT
            """),
            // Each log stream's signing secrets (Standard Webhooks' HMAC-SHA256), sealed under the
            // key-encryption key: the current one, then the one it replaced while that still signs
            // beside it (until `signing_previous_until`). Streams from before have none until
            // their secret is rotated.
            (27, """
            ALTER TABLE log_streams ADD COLUMN signing_sealed \(blob);
            ALTER TABLE log_streams ADD COLUMN signing_previous_until BIGINT NOT NULL DEFAULT 0
            """),
            // An identity provider's own name for an account (SCIM's `userName`, kept in
            // `app_metadata` when the provider sends it apart from the address): one account
            // each, in any case, and found without reading every account's JSON.
            (28, sqlite ? "CREATE UNIQUE INDEX users_scim_user_name ON users (\(directoryNameSQLite))"
                        : "CREATE UNIQUE INDEX CONCURRENTLY users_scim_user_name ON users ((\(directoryNamePostgres)))"),
            // Roles (Auth0's role-based access control): an API's permissions, by its audience,
            // given to accounts. An account's tokens for the API read its permissions through
            // user_roles' key, and a role's members through user_roles_role.
            (29, """
            CREATE TABLE roles (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                description TEXT,
                external_id TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            CREATE TABLE role_permissions (
                role_id TEXT NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
                audience TEXT NOT NULL,
                permission TEXT NOT NULL,
                PRIMARY KEY (role_id, audience, permission)
            )\(clustered);
            CREATE TABLE user_roles (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                role_id TEXT NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, role_id)
            )\(clustered);
            CREATE INDEX user_roles_role ON user_roles(role_id, created_at)
            """),
            // The roles a client's users must have one of (`required_roles`), as a JSON list of names.
            (30, "ALTER TABLE clients ADD COLUMN required_roles TEXT"),
            // The least class of sign-in a client's tokens are given for (`minimum_acr`: phr, phrh).
            (31, "ALTER TABLE clients ADD COLUMN minimum_acr TEXT"),
            // A client's own session lifetimes, in seconds (idle and absolute), where shorter than the deployment's.
            (32, "ALTER TABLE clients ADD COLUMN refresh_ttl BIGINT; ALTER TABLE clients ADD COLUMN refresh_absolute_ttl BIGINT"),
            // When an account's role ends (just-in-time access); NULL: never. The purge finds the
            // ended ones through user_roles_expiry, which holds only the temporary ones.
            (33, """
            ALTER TABLE user_roles ADD COLUMN expires_at BIGINT;
            CREATE INDEX user_roles_expiry ON user_roles(expires_at) WHERE expires_at IS NOT NULL
            """),
            // The token a refresh token was rotated into, so that a retry of a refresh whose
            // answer was lost can find it (`tokens.refresh_token_retry_window`); NULL for a live
            // token and for those rotated without a window. And a client's own window, in
            // seconds (NULL: the deployment's).
            (34, "ALTER TABLE refresh_tokens ADD COLUMN successor \(blob); ALTER TABLE clients ADD COLUMN refresh_retry_window BIGINT"),
            // The highest serial number of a Metadata Service BLOB that verified at any instance,
            // by the SHA-256 of the root it verified under (MDS 3.0 §3.1.7: an older BLOB is
            // ignored), so that neither a restart nor another instance puts an older one in force.
            // And the passkeys whose owners were told that a BLOB refuses their model, so that
            // each is told once, by one instance.
            (35, """
            CREATE TABLE metadata_numbers (
                root \(blob) PRIMARY KEY,
                number BIGINT NOT NULL,
                seen_at BIGINT NOT NULL
            );
            CREATE TABLE refusal_notices (
                credential_id \(blob) PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                told_at BIGINT NOT NULL
            )
            """),
        ]
    }

    /// The indexed expression of migration 28, which a query must repeat word for word for the
    /// index to answer it.
    static let directoryNameSQLite = "lower(json_extract(app_metadata, '$.scim_user_name'))"
    static let directoryNamePostgres = "lower(app_metadata::jsonb ->> 'scim_user_name')"

    /// PostgreSQL: the versions that build one index on a table that may already be large and
    /// in use (an upgrade while other instances serve), and the index's name. They run outside a
    /// transaction, so that rows are written while the index builds
    /// (``SQLStore/buildConcurrently(_:_:sql:)``).
    static let builtConcurrently: [Int: String] = [15: "audit_events_user", 16: "refresh_tokens_user", 28: "users_scim_user_name"]

    /// Credential ID lists as stored: each ID as a 2-byte big-endian length and its bytes.
    static func pack(_ ids: [[UInt8]]) -> [UInt8] {
        ids.flatMap { [UInt8($0.count >> 8), UInt8($0.count & 0xff)] + $0 }
    }

    static func unpack(_ bytes: [UInt8]) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var i = 0
        while i + 2 <= bytes.count {
            let n = Int(bytes[i]) << 8 | Int(bytes[i + 1])
            guard i + 2 + n <= bytes.count else { break }
            result.append(Array(bytes[(i + 2)..<(i + 2 + n)]))
            i += 2 + n
        }
        return result
    }
}
