// The hosted pages' templates (DESIGN.md, "The web"). Every value is put by the template layer
// (``Template``), escaped; the only script and stylesheet are /assets/signet.js and
// /assets/signet.css; no inline script or style, so the Content-Security-Policy can forbid both.

/// The templates, parsed once.
public enum Pages {
    /// Every page inside it. `data-*` on `#page` hand the script what it needs (the CSRF token,
    /// the pending authorization, the messages in the page's language).
    public static let layout = Template("""
        <!doctype html>
        <html lang="{{lang}}">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · {{service}}</title>
        <link rel="stylesheet" href="/assets/signet.css">
        {{#brandCSS}}<link rel="stylesheet" href="{{brandCSS}}">{{/brandCSS}}
        <script src="/assets/signet.js" defer></script>
        </head>
        <body>
        <div id="page" data-page="{{page}}" data-csrf="{{csrf}}" data-authorization="{{authorization}}" data-next="{{next}}" data-rp-id="{{rpID}}" \
        data-msg-no-passkey="{{t.msg_no_passkey}}" data-msg-unsupported="{{t.msg_unsupported}}" data-msg-failed="{{t.msg_failed}}" \
        data-msg-working="{{t.msg_working}}" data-msg-offer-done="{{t.offer_done}}" data-msg-no-link="{{t.enroll_no_link}}">
        <header class="brand">{{#logoURL}}<img class="logo" src="{{logoURL}}" alt="{{service}}" data-testid="logo">{{/logoURL}}\
        {{^logoURL}}<span class="mark" aria-hidden="true"></span>{{service}}{{/logoURL}}</header>
        <main class="card">
        {{body}}
        </main>
        <footer><nav aria-label="{{t.language}}">{{#languages}}{{#separator}} · {{/separator}}\
        <a href="{{url}}" lang="{{code}}" hreflang="{{code}}"{{#current}} aria-current="true"{{/current}}>{{name}}</a>{{/languages}}</nav></footer>
        </div>
        </body>
        </html>

        """)

    static let messages = """
        {{#error}}<p class="message error" role="alert" data-testid="error" data-reason="{{reason}}">{{error}}</p>{{/error}}\
        {{#notice}}<p class="message notice" role="status" data-testid="notice">{{notice}}</p>{{/notice}}
        """

    static let hidden = """
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="authorization" value="{{authorization}}">\
        <input type="hidden" name="return_to" value="{{returnTo}}">
        """

    /// The way back to the app from a page of a pending authorization (`GET /authorize/cancel`).
    static let cancel = """
        {{#cancelURL}}<p class="alt"><a href="{{cancelURL}}" data-testid="cancel-authorization">{{t.cancel_authorization}}</a></p>{{/cancelURL}}
        """

    /// `/login`: passkey autofill on the email field, the passkey button, the email code. When
    /// the app asked for a passkey (`passkeyOnly`), the passkey alone, said so; with a pending
    /// authorization, the way back to the app (`cancelURL`); the link to sign up where people make
    /// their own accounts (`signupURL`). With a pending authorization, the app it is for
    /// (`appName`), so the user sees where the sign-in leads.
    public static let login = Template("""
        <h1>{{t.signin_title}}</h1>
        {{#appName}}<p class="hint" data-testid="app-name">{{t.continue_to}} <strong>{{appName}}</strong></p>{{/appName}}
        \(messages)
        {{#passkeyOnly}}<p class="message notice" role="status" data-testid="passkey-required">\
        {{#hardwareOnly}}{{t.hardware_passkey_required}}{{/hardwareOnly}}{{^hardwareOnly}}{{t.passkey_required}}{{/hardwareOnly}}</p>{{/passkeyOnly}}
        <button type="button" id="passkey-signin" class="primary wide" data-testid="passkey-signin" hidden>{{t.signin_passkey}}</button>
        <p id="status" class="status" role="status" aria-live="polite"></p>
        {{^passkeyOnly}}<div class="divider" id="divider" hidden><span>{{t.or}}</span></div>
        <form method="post" action="/login/code" id="login-form">
        \(hidden)
        <label for="email">{{t.email}}</label>
        <input id="email" name="email" type="email" autocomplete="username webauthn" required maxlength="254" value="{{email}}" data-testid="email">
        <button type="submit" class="secondary wide" data-testid="send-code">{{t.send_code}}</button>
        </form>
        <p class="alt"><a href="{{recoveryURL}}" data-testid="use-recovery-code">{{t.use_recovery_code}}</a></p>{{/passkeyOnly}}
        {{#signupURL}}<p class="alt">{{t.no_account}} <a href="{{signupURL}}" data-testid="create-account">{{t.create_account}}</a></p>{{/signupURL}}
        \(cancel)
        """)

    /// The code's page, after "Email me a code".
    public static let code = Template("""
        <h1>{{t.code_title}}</h1>
        <p>{{t.code_sent}} <strong>{{email}}</strong></p>
        \(messages)
        <form method="post" action="/login/code/verify">
        \(hidden)<input type="hidden" name="email" value="{{email}}">
        <label for="code">{{t.code}}</label>
        <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 \\-]*" maxlength="16" required data-testid="code" autofocus>
        <button type="submit" class="primary wide" data-testid="verify-code">{{t.verify}}</button>
        </form>
        <form method="post" action="/login/code">
        \(hidden)<input type="hidden" name="email" value="{{email}}">
        <button type="submit" class="link">{{t.resend}}</button>
        </form>
        \(cancel)
        """)

    /// `/login/recovery`: a recovery code and its account's address, for someone without their
    /// passkeys (and perhaps their mailbox). Plain forms: it works without the script.
    public static let recovery = Template("""
        <h1>{{t.recovery_signin_title}}</h1>
        {{#appName}}<p class="hint" data-testid="app-name">{{t.continue_to}} <strong>{{appName}}</strong></p>{{/appName}}
        <p class="hint">{{t.recovery_signin_text}}</p>
        \(messages)
        <form method="post" action="/login/recovery">
        \(hidden)
        <label for="email">{{t.email}}</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="{{email}}" data-testid="email">
        <label for="recovery-code">{{t.recovery_code}}</label>
        <input id="recovery-code" name="code" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="64" required \
        placeholder="XXXX-XXXX-XXXX" data-testid="recovery-code">
        <button type="submit" class="primary wide" data-testid="recovery-signin">{{t.signin}}</button>
        </form>
        <p class="alt"><a href="{{loginURL}}">{{t.back}}</a></p>
        \(cancel)
        """)

    /// `/signup`: email and name, then a passkey; without one, the email code. With
    /// `signup_domains` (`codeFirst`), the code first, and the passkey offered after it.
    public static let signup = Template("""
        <h1>{{t.signup_title}}</h1>
        {{#appName}}<p class="hint" data-testid="app-name">{{t.continue_to}} <strong>{{appName}}</strong></p>{{/appName}}
        \(messages)
        {{#codeFirst}}<p class="hint" data-testid="code-first">{{t.signup_code_first}}</p>{{/codeFirst}}
        <form method="post" action="/signup" id="signup-form" data-fallback="{{codeFirst}}">
        \(hidden)
        <label for="email">{{t.email}}</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="{{email}}" data-testid="email">
        <label for="name">{{t.name}}</label>
        <input id="name" name="name" autocomplete="name" maxlength="200" value="{{name}}" data-testid="name">
        <button type="submit" class="primary wide" data-testid="signup-submit">{{#codeFirst}}{{t.signup_code}}{{/codeFirst}}{{^codeFirst}}{{t.signup_submit}}{{/codeFirst}}</button>
        </form>
        <p id="status" class="status" role="status" aria-live="polite"></p>
        <p class="alt">{{t.have_account}} <a href="{{loginURL}}">{{t.signin}}</a></p>
        \(cancel)
        """)

    /// After an email-code sign-in: a passkey for this device (and conditional creation).
    public static let offer = Template("""
        <h1>{{t.offer_title}}</h1>
        <p>{{t.offer_text}}</p>
        <button type="button" id="create-passkey" class="primary wide" data-testid="create-passkey">{{t.create_passkey}}</button>
        <p id="status" class="status" role="status" aria-live="polite"></p>
        <a class="button secondary wide" href="{{next}}" data-testid="skip-passkey" id="skip-passkey">{{t.not_now}}</a>
        """)

    /// `/enroll#LINK`: an operator's link to a first passkey. The link stays in the fragment,
    /// which the browser never sends; the script reads it, shows the account's address and
    /// makes the passkey.
    public static let enroll = Template("""
        <h1>{{t.enroll_title}}</h1>
        <p>{{t.enroll_text}}</p>
        <p class="who" id="enroll-email" data-testid="enroll-email"></p>
        <button type="button" id="enroll" class="primary wide" data-testid="enroll" hidden>{{t.create_passkey}}</button>
        <p id="status" class="status" role="status" aria-live="polite">{{t.enroll_checking}}</p>
        <noscript><p class="message error" role="alert">{{t.enroll_needs_script}}</p></noscript>
        """)

    /// `/account`.
    public static let account = Template("""
        <h1>{{t.account_title}}</h1>
        <p class="who">{{email}}</p><span id="signal-user" hidden data-user-id="{{userHandle}}" data-name="{{email}}" data-display-name="{{displayName}}"></span>
        \(messages)
        {{#stepUp}}<section class="stepup" data-testid="step-up-prompt">
        <p>{{t.stepup_text}}</p>
        <button type="button" id="step-up" class="primary" data-testid="step-up">{{t.stepup_button}}</button>
        <form id="pending" method="post" action="{{pendingAction}}"><input type="hidden" name="csrf" value="{{csrf}}">\
        {{#pendingFields}}<input type="hidden" name="{{field}}" value="{{value}}">{{/pendingFields}}</form>
        </section>{{/stepUp}}
        {{#newCodes}}<section class="codes" data-testid="recovery-codes"><h2>{{t.recovery_codes}}</h2><p>{{t.recovery_shown_once}}</p>
        <ol class="codes">{{#codes}}<li><code>{{code}}</code></li>{{/codes}}</ol></section>{{/newCodes}}
        <section aria-labelledby="h-passkeys"><h2 id="h-passkeys">{{t.passkeys}}</h2>
        <ul class="rows">{{#passkeys}}
        <li class="row" data-testid="passkey-row" data-credential-id="{{id}}">
        <div class="row-main"><strong class="row-title" data-testid="passkey-name">{{label}}</strong>
        <span class="meta">{{provider}} · {{synced}} · {{t.created}} <span class="when">{{created}}</span> · {{t.last_used}} <span class="when">{{lastUsed}}</span></span>
        {{^allowed}}<span class="meta warning" data-testid="passkey-not-allowed">{{t.passkey_not_allowed}}</span>{{/allowed}}</div>
        <div class="row-actions">
        <form method="post" action="/account/passkeys/{{id}}/rename" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">
        <label class="visually-hidden" for="rename-{{id}}">{{t.rename_label}}</label>
        <input id="rename-{{id}}" name="name" value="{{name}}" placeholder="{{provider}}" maxlength="100" required data-testid="passkey-rename-input">
        <button type="submit" data-testid="passkey-rename">{{t.rename}}</button></form>
        {{#removable}}<form method="post" action="/account/passkeys/{{id}}/revoke" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="danger" data-testid="passkey-revoke">{{t.revoke}}</button></form>{{/removable}}
        </div>{{^removable}}<p class="meta" data-testid="only-passkey">{{t.only_passkey}}</p>{{/removable}}</li>{{/passkeys}}
        </ul>{{^passkeys}}<p class="empty">{{t.no_passkeys}}</p>{{/passkeys}}
        {{^passkeyLimit}}<button type="button" id="create-passkey" class="secondary" data-testid="create-passkey">{{t.add_passkey}}</button>{{/passkeyLimit}}
        {{#passkeyLimit}}<p class="meta" data-testid="passkey-limit">{{t.passkey_limit_reached}}</p>{{/passkeyLimit}}
        <p id="status" class="status" role="status" aria-live="polite"></p>
        </section>
        <section aria-labelledby="h-device-keys"><h2 id="h-device-keys">{{t.device_keys}}</h2>
        <ul class="rows">{{#deviceKeys}}<li class="row" data-testid="device-key-row"><div class="row-main"><strong class="row-title">{{label}}</strong>
        <span class="meta">{{platform}} · {{t.created}} <span class="when">{{created}}</span> · {{t.last_used}} <span class="when">{{lastUsed}}</span></span></div>
        <div class="row-actions"><form method="post" action="/account/device-keys/{{id}}/revoke" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="danger" data-testid="device-key-revoke">{{t.revoke}}</button></form></div></li>{{/deviceKeys}}</ul>
        {{^deviceKeys}}<p class="empty">{{t.no_device_keys}}</p>{{/deviceKeys}}
        </section>
        <section aria-labelledby="h-sessions"><h2 id="h-sessions">{{t.sessions}}</h2>
        <ul class="rows">{{#sessions}}<li class="row" data-testid="session-row" data-current="{{current}}"><div class="row-main">
        <strong class="row-title">{{label}}</strong>{{#current}} <span class="badge" data-testid="session-current">{{t.this_device}}</span>{{/current}}
        <span class="meta">{{kind}}{{#address}} · {{t.signed_in_from}} {{address}}{{/address}} · {{t.created}} <span class="when">{{created}}</span> · {{t.last_seen}} <span class="when">{{lastSeen}}</span></span></div>
        <div class="row-actions">{{#current}}<form method="post" action="/logout" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="secondary" data-testid="session-sign-out">{{t.signout}}</button></form>{{/current}}{{^current}}<form method="post" action="/account/sessions/{{id}}/revoke" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="danger" data-testid="session-revoke">{{t.revoke}}</button></form>{{/current}}</div></li>{{/sessions}}</ul>
        {{#sessionsTruncated}}<p class="meta" data-testid="sessions-truncated">{{t.sessions_truncated}}</p>{{/sessionsTruncated}}
        {{#otherSessions}}<form method="post" action="/account/sessions/revoke-others"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="secondary" data-testid="sessions-revoke-others">{{t.signout_others}}</button></form>{{/otherSessions}}
        </section>
        {{#hasRoles}}<section aria-labelledby="h-roles" data-testid="roles-section"><h2 id="h-roles">{{t.roles_title}}</h2><p class="meta">{{t.roles_hint}}</p>
        <ul class="rows">{{#roles}}<li class="row" data-testid="role-row"><div class="row-main"><strong class="row-title">{{name}}</strong>
        {{#until}}<span class="meta" data-testid="role-until">{{t.role_until}} <span class="when">{{until}}</span></span>{{/until}}{{#description}}<span class="meta">{{description}}</span>{{/description}}{{#grants}}<span class="meta" data-testid="role-grants">{{grants}}</span>{{/grants}}</div></li>{{/roles}}</ul>
        </section>{{/hasRoles}}
        <section aria-labelledby="h-name"><h2 id="h-name">{{t.name_title}}</h2>
        <form method="post" action="/account/name" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">
        <label class="visually-hidden" for="account-name">{{t.name_title}}</label>
        <input id="account-name" name="name" value="{{accountName}}" maxlength="200" autocomplete="name" data-testid="account-name">
        <button type="submit" data-testid="account-rename">{{t.save}}</button></form>
        </section>
        <section aria-labelledby="h-email"><h2 id="h-email">{{t.email_title}}</h2>
        <p data-testid="account-email">{{email}}</p>
        {{#emailTaken}}<p class="message error" role="alert" data-testid="email-taken">{{emailTaken}}</p>{{/emailTaken}}
        {{^emailPending}}<details class="fold" data-testid="email-section"><summary>{{t.email_change}}</summary>
        <form method="post" action="/account/email"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="new-email">{{t.email_new}}</label>
        <input id="new-email" name="email" type="email" autocomplete="email" required maxlength="254" data-testid="new-email">
        <button type="submit" class="secondary" data-testid="email-change">{{t.email_send}}</button></form></details>{{/emailPending}}
        {{#emailPending}}<p>{{t.email_code_sent}} <strong data-testid="email-pending">{{emailPending}}</strong></p>
        {{#emailError}}<p class="message error" role="alert" data-testid="email-error">{{emailError}}</p>{{/emailError}}
        <form method="post" action="/account/email/verify"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="email" value="{{emailPending}}">
        <label for="email-code">{{t.code}}</label>
        <input id="email-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 \\-]*" maxlength="16" required data-testid="email-code" autofocus>
        <button type="submit" class="primary" data-testid="email-verify">{{t.email_confirm}}</button></form>{{/emailPending}}
        {{#emailCodes}}<form method="post" action="/account/email-sign-in"><input type="hidden" name="csrf" value="{{csrf}}">
        {{#emailSignIn}}<p data-testid="email-sign-in" data-enabled="true">{{t.email_sign_in_on}}</p><input type="hidden" name="enabled" value="false">
        <button type="submit" class="secondary" data-testid="email-sign-in-toggle">{{t.email_sign_in_turn_off}}</button>{{/emailSignIn}}
        {{^emailSignIn}}<p data-testid="email-sign-in" data-enabled="false">{{t.email_sign_in_off}}</p><input type="hidden" name="enabled" value="true">
        <button type="submit" class="secondary" data-testid="email-sign-in-toggle">{{t.email_sign_in_turn_on}}</button>{{/emailSignIn}}</form>{{/emailCodes}}
        </section>
        <section aria-labelledby="h-recovery"><h2 id="h-recovery">{{t.recovery_codes}}</h2>
        {{#recoveryOpen}}<p class="message error" data-testid="recovery-open">{{t.recovery_open}} {{recoveryUntil}}.</p>
        <form method="post" action="/account/recovery/cancel"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="danger">{{t.recovery_cancel}}</button></form>{{/recoveryOpen}}
        <p>{{#codesLeft}}{{codesLeft}} {{t.recovery_left}}{{/codesLeft}}{{^codesLeft}}{{t.recovery_none}}{{/codesLeft}}</p>
        <form method="post" action="/account/recovery-codes"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="secondary" data-testid="recovery-generate">{{t.recovery_generate}}</button></form>
        </section>
        <section aria-labelledby="h-events"><h2 id="h-events">{{#eventsPaged}}{{t.events_earlier}}{{/eventsPaged}}{{^eventsPaged}}{{t.events}}{{/eventsPaged}}</h2>
        <ul class="events">{{#events}}<li data-testid="event-row"><span class="event-kind{{#refused}} danger{{/refused}}">{{kind}}</span>{{#what}} <q class="event-what" data-testid="event-what">{{what}}</q>{{/what}} <span class="meta"><span class="when">{{at}}</span>{{#app}} · {{app}}{{/app}}{{#outcome}} · {{outcome}}{{/outcome}}{{#address}} · {{address}}{{/address}}</span></li>{{/events}}</ul>
        {{^events}}<p class="empty">{{t.no_events}}</p>{{/events}}
        {{#eventsPaged}}<p class="pager"><a href="/account#h-events" data-testid="newest-events">{{t.newest_events}}</a></p>{{/eventsPaged}}
        {{#olderEvents}}<p class="pager"><a href="/account?events_before={{olderEvents}}#h-events" data-testid="older-events">{{t.older_events}}</a></p>{{/olderEvents}}
        <form method="post" action="/account/export"><input type="hidden" name="csrf" value="{{csrf}}">
        <p class="meta">{{t.export_hint}}</p>
        <button type="submit" class="secondary" data-testid="export-data">{{t.export_data}}</button></form>
        </section>
        <form method="post" action="/logout"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="secondary wide" data-testid="signout">{{t.signout}}</button></form>
        <details class="erase" data-testid="delete-section"{{#deleteError}} open{{/deleteError}}><summary>{{t.delete_title}}</summary>
        <p>{{t.delete_text}}</p>
        {{#deleteError}}<p class="message error" role="alert" data-testid="delete-error">{{t.delete_mismatch}}</p>{{/deleteError}}
        <form method="post" action="/account/delete"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="delete-confirm">{{t.delete_confirm}}</label>
        <input id="delete-confirm" name="confirm" type="email" autocomplete="off" required maxlength="254" data-testid="delete-confirm"{{#deleteError}} autofocus{{/deleteError}}>
        <button type="submit" class="danger" data-testid="delete-account">{{t.delete_button}}</button></form>
        </details>
        """)

    /// `/device`: approve another device's sign-in (RFC 8628 §3.3) after a passkey check.
    public static let device = Template("""
        <h1>{{t.device_title}}</h1>
        \(messages)
        {{#stepUp}}<section class="stepup" data-testid="step-up-prompt"><p>{{t.stepup_text}}</p>
        <button type="button" id="step-up" class="primary" data-testid="step-up">{{t.stepup_button}}</button>
        <form id="pending" method="post" action="/device"><input type="hidden" name="csrf" value="{{csrf}}">\
        {{#pendingFields}}<input type="hidden" name="{{field}}" value="{{value}}">{{/pendingFields}}</form></section>{{/stepUp}}
        {{#request}}<section data-testid="device-request"><p>{{t.device_review}}</p>
        <dl class="facts"><dt>{{t.device_code}}</dt><dd data-testid="device-request-code">{{code}}</dd>
        <dt>{{t.device_app}}</dt><dd data-testid="device-request-app">{{app}}</dd>
        <dt>{{t.device_device}}</dt><dd data-testid="device-request-device">{{device}}</dd>
        <dt>{{t.device_address}}</dt><dd data-testid="device-request-address">{{address}}</dd>
        <dt>{{t.device_asked}}</dt><dd>{{asked}}</dd></dl>
        <form method="post" action="/device"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="user_code" value="{{code}}">
        <div class="pair"><button type="submit" name="decision" value="approve" class="primary" data-testid="device-approve">{{t.device_approve}}</button>
        <button type="submit" name="decision" value="deny" class="secondary" data-testid="device-deny">{{t.device_deny}}</button></div>
        </form></section>{{/request}}
        {{#done}}<a class="button secondary wide" href="/account" data-testid="device-account">{{t.device_account}}</a>{{/done}}
        {{^request}}{{^done}}<form method="post" action="/device">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="user_code">{{t.device_code}}</label>
        <p class="hint" id="device-hint">{{t.device_text}}</p>
        <input id="user_code" name="user_code" value="{{userCode}}" autocomplete="off" autocapitalize="characters" maxlength="16" required aria-describedby="device-hint" data-testid="device-code">
        <button type="submit" name="decision" value="review" class="primary wide" data-testid="device-continue">{{t.device_continue}}</button>
        </form>{{/done}}{{/request}}
        """)

    /// `GET /logout` without an `id_token_hint`: the user is asked first (OpenID Connect
    /// RP-Initiated Logout 1.0 §2), so a link on another site cannot sign anyone out.
    public static let signOut = Template("""
        <h1>{{t.signout_title}}</h1>
        <p>{{t.signout_text}}</p>
        {{#apps}}<p data-testid="signout-apps-intro">{{t.signout_apps}}</p><ul class="apps" data-testid="signout-apps">{{#apps}}<li>{{name}}</li>{{/apps}}</ul>{{/apps}}
        <form method="post" action="/logout"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="client_id" value="{{clientID}}"><input type="hidden" name="post_logout_redirect_uri" value="{{redirectURI}}">
        <input type="hidden" name="state" value="{{state}}">
        <button type="submit" class="primary wide" data-testid="signout">{{t.signout}}</button></form>
        <a class="button secondary wide" href="/account" data-testid="stay-signed-in">{{t.stay}}</a>
        """)

    /// The error page: a wrong client or redirect URI, a stale form, a page that failed.
    public static let error = Template("""
        <h1>{{t.error_title}}</h1>
        <p class="message error" role="alert" data-testid="error" data-reason="{{reason}}">{{error}}</p>
        <p><a href="/login">{{t.back}}</a></p>
        """)
}
