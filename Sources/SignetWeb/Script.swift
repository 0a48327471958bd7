/// `/assets/signet.js`: the pages' one script, ours, no framework. It runs the WebAuthn calls
/// (WebAuthn L3 §5.1.3 create, §5.1.4 get, with `mediation: "conditional"` where the browser
/// has it) and the Signal API (§5.1.10), and posts JSON with the page's CSRF token.
public enum Script {
    public static let source = #"""
    "use strict";
    (function () {
      const page = document.getElementById("page");
      if (!page) return;
      const data = page.dataset;
      const status = document.getElementById("status");
      const say = (text) => { if (status) status.textContent = text || ""; };

      const b64url = {
        encode(buffer) {
          const bytes = new Uint8Array(buffer);
          let s = "";
          for (const b of bytes) s += String.fromCharCode(b);
          return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
        },
        decode(text) {
          const s = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4));
          const bytes = new Uint8Array(s.length);
          for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
          return bytes.buffer;
        },
      };

      async function post(path, body) {
        const response = await fetch(path, {
          method: "POST",
          credentials: "same-origin",
          headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": data.csrf },
          body: JSON.stringify(body || {}),
        });
        const answer = await response.json().catch(() => ({}));
        if (!response.ok) {
          const error = new Error(answer.error_description || "request failed");
          error.reason = answer.reason;
          throw error;
        }
        return answer;
      }

      function requestOptions(json) {
        if (window.PublicKeyCredential && PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(json);
        const options = Object.assign({}, json, { challenge: b64url.decode(json.challenge) });
        if (json.allowCredentials) options.allowCredentials = json.allowCredentials.map((c) => Object.assign({}, c, { id: b64url.decode(c.id) }));
        return options;
      }

      function creationOptions(json) {
        if (window.PublicKeyCredential && PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(json);
        const options = Object.assign({}, json, { challenge: b64url.decode(json.challenge), user: Object.assign({}, json.user, { id: b64url.decode(json.user.id) }) });
        if (json.excludeCredentials) options.excludeCredentials = json.excludeCredentials.map((c) => Object.assign({}, c, { id: b64url.decode(c.id) }));
        return options;
      }

      function credentialJSON(credential) {
        if (typeof credential.toJSON === "function") return credential.toJSON();
        const r = credential.response;
        const response = { clientDataJSON: b64url.encode(r.clientDataJSON) };
        if (r.attestationObject) {
          response.attestationObject = b64url.encode(r.attestationObject);
          if (r.getTransports) response.transports = r.getTransports();
        } else {
          response.authenticatorData = b64url.encode(r.authenticatorData);
          response.signature = b64url.encode(r.signature);
          if (r.userHandle) response.userHandle = b64url.encode(r.userHandle);
        }
        return { id: credential.id, rawId: b64url.encode(credential.rawId), type: credential.type, authenticatorAttachment: credential.authenticatorAttachment, response };
      }

      const webauthn = !!(window.PublicKeyCredential && navigator.credentials);
      const go = (url) => window.location.assign(url);

      // A passkey the browser offered but Signet does not know (deleted on the server): tell the
      // provider, so it stops offering it (Signal API).
      function signalUnknown(credentialID) {
        if (PublicKeyCredential.signalUnknownCredential && credentialID) {
          PublicKeyCredential.signalUnknownCredential({ rpId: data.rpId, credentialId: credentialID }).catch(() => {});
        }
      }

      // A passkey the authenticator has just made, sent to `path`. When the server refuses it,
      // nothing of it was kept (the ceremony's writes are one transaction), and the provider
      // would keep offering a passkey that cannot sign in: tell it to forget that one. Not for
      // the passkey the server has already, nor when the database could not say.
      async function finishRegistration(path, body, credential) {
        try {
          return await post(path, Object.assign({ authn_response: credentialJSON(credential) }, body));
        } catch (error) {
          if (error.reason && error.reason !== "credential_exists" && error.reason !== "database_unavailable") signalUnknown(credential.id);
          throw error;
        }
      }

      async function signIn(mediation, signal) {
        const start = await post("/login/options", {});
        const options = { publicKey: requestOptions(start.authn_params_public_key) };
        if (mediation) options.mediation = mediation;
        if (signal) options.signal = signal;
        // The page's autofill request, "pending" and then "ended", on <html> (scripts read it).
        const autofill = mediation === "conditional";
        if (autofill) document.documentElement.dataset.autofill = "pending";
        let credential;
        try {
          credential = await navigator.credentials.get(options);
        } finally {
          if (autofill) document.documentElement.dataset.autofill = "ended";
        }
        say(data.msgWorking);
        try {
          const done = await post("/login/passkey", { auth_session: start.auth_session, authn_response: credentialJSON(credential), authorization: data.authorization, return_to: returnTo() });
          go(done.redirect);
        } catch (error) {
          if (error.reason === "credential_unknown" || error.reason === "credential_revoked") signalUnknown(credential.id);
          throw error;
        }
      }

      const returnTo = () => { const field = document.querySelector("input[name=return_to]"); return field ? field.value : ""; };

      function explain(error) {
        if (error && error.name === "AbortError") return;
        if (error && error.name === "NotAllowedError") { say(data.msgNoPasskey); return; }
        say((error && error.reason && error.message) || data.msgFailed);
      }

      // /login: autofill on the email field, started at once; the button aborts it and asks modally.
      if (data.page === "login" && webauthn) {
        const button = document.getElementById("passkey-signin");
        button.hidden = false;
        const divider = document.getElementById("divider");
        if (divider) divider.hidden = false;
        let conditional = null;
        const startConditional = async () => {
          // Autofill needs the email field; a page for a passkey alone has the button only.
          if (!document.getElementById("email")) return;
          if (!PublicKeyCredential.isConditionalMediationAvailable || !(await PublicKeyCredential.isConditionalMediationAvailable())) return;
          conditional = new AbortController();
          // Autofill the user did not pick is no failure: only the server's refusals are shown.
          signIn("conditional", conditional.signal).catch((error) => { if (error && error.reason) explain(error); });
        };
        button.addEventListener("click", () => {
          if (conditional) conditional.abort();
          conditional = null;
          say(data.msgWorking);
          signIn(null, null).catch((error) => { explain(error); startConditional(); });
        });
        startConditional();
      }

      // /signup: a passkey for the new account; where none can be made, the form goes on to the
      // email code.
      if (data.page === "signup" && webauthn) {
        const form = document.getElementById("signup-form");
        form.addEventListener("submit", async (event) => {
          if (form.dataset.fallback === "1") return;
          event.preventDefault();
          say(data.msgWorking);
          try {
            const start = await post("/signup/options", { email: form.email.value, name: form.name.value });
            const credential = await navigator.credentials.create({ publicKey: creationOptions(start.authn_params_public_key) });
            const done = await finishRegistration("/login/passkey", { auth_session: start.auth_session, authorization: data.authorization, return_to: returnTo() }, credential);
            go(done.redirect);
          } catch (error) {
            if (error.reason && error.reason !== "signup_code_required") { say(error.message); return; }
            // No passkey could be made here, or accounts start with a code: the email code instead.
            form.dataset.fallback = "1";
            form.submit();
          }
        });
      }

      // /enroll#LINK: an operator's link to a first passkey. The link is taken out of the address
      // bar and the history at once (it is a credential) and kept in this tab alone, for a reload
      // or another language; checked; then the passkey made and the browser signed in.
      if (data.page === "enroll") {
        const kept = "signet-enrollment";
        const ticket = window.location.hash.slice(1) || sessionStorage.getItem(kept) || "";
        if (window.location.hash) { sessionStorage.setItem(kept, ticket); history.replaceState(null, "", window.location.pathname + window.location.search); }
        const button = document.getElementById("enroll");
        if (!ticket) say(data.msgNoLink);
        else if (!webauthn) say(data.msgUnsupported);
        else {
          post("/enroll/options", { ticket }).then((first) => {
            document.getElementById("enroll-email").textContent = first.email;
            button.hidden = false;
            say("");
            // The options fetched with the page serve the first click (no request between the
            // click and the sheet) while they are less than half their life old; a page left
            // open longer asks for new ones, so its passkey is not made for a challenge that
            // has expired.
            let start = first;
            let fetched = Date.now();
            button.addEventListener("click", async () => {
              say(data.msgWorking);
              try {
                if (!start || Date.now() - fetched > (start.authn_params_public_key.timeout || 300000) / 2) {
                  start = await post("/enroll/options", { ticket });
                  fetched = Date.now();
                }
                const options = start;
                start = null;
                const credential = await navigator.credentials.create({ publicKey: creationOptions(options.authn_params_public_key) });
                const done = await finishRegistration("/enroll/passkey", { ticket, auth_session: options.auth_session }, credential);
                sessionStorage.removeItem(kept);
                go(done.redirect);
              } catch (error) { explain(error); }
            });
          }).catch(explain);
        }
      }

      async function addPasskey(conditional, signal) {
        const start = await post("/account/passkeys/options", { conditional: !!conditional });
        const options = { publicKey: creationOptions(start.authn_params_public_key) };
        if (conditional) options.mediation = "conditional";
        if (signal) options.signal = signal;
        const credential = await navigator.credentials.create(options);
        return finishRegistration("/account/passkeys", { auth_session: start.auth_session }, credential);
      }

      // After a code sign-in: offer a passkey; where the browser can, create one conditionally.
      if (data.page === "offer") {
        const button = document.getElementById("create-passkey");
        let created = false;
        let pending = null;
        if (!webauthn) { button.hidden = true; }
        else {
          button.addEventListener("click", () => {
            if (created) { go(data.next); return; }
            if (pending) pending.abort();
            pending = null;
            say(data.msgWorking);
            addPasskey(false).then(() => { say(data.msgOfferDone); go(data.next); }).catch((error) => {
              // This device has a passkey for the account already (made conditionally): go on.
              if (error && error.name === "InvalidStateError") { go(data.next); return; }
              explain(error);
            });
          });
          if (PublicKeyCredential.getClientCapabilities) {
            PublicKeyCredential.getClientCapabilities().then((caps) => {
              if (caps && caps.conditionalCreate && !created) {
                pending = new AbortController();
                addPasskey(true, pending.signal).then(() => { created = true; pending = null; say(data.msgOfferDone); }).catch(() => {});
              }
            }).catch(() => {});
          }
        }
      }

      // The account page: add a passkey, step up, and keep the provider's list in step.
      if (data.page === "account" || data.page === "device") {
        const add = document.getElementById("create-passkey");
        if (add) {
          if (!webauthn) add.hidden = true;
          add.addEventListener("click", () => {
            say(data.msgWorking);
            addPasskey(false).then(() => go("/account?notice=added")).catch((error) => {
              if (error.reason === "step_up_required") { go("/account?step_up=1"); return; }
              explain(error);
            });
          });
        }
        const stepUp = document.getElementById("step-up");
        if (stepUp) {
          stepUp.addEventListener("click", async () => {
            say(data.msgWorking);
            try {
              const start = await post("/account/step-up/options", {});
              const credential = await navigator.credentials.get({ publicKey: requestOptions(start.authn_params_public_key) });
              await post("/account/step-up", { auth_session: start.auth_session, authn_response: credentialJSON(credential) });
              const pending = document.getElementById("pending");
              if (pending && pending.getAttribute("action")) pending.submit(); else window.location.reload();
            } catch (error) { explain(error); }
          });
        }
        const user = document.getElementById("signal-user");
        if (user && window.PublicKeyCredential) {
          const ids = Array.from(document.querySelectorAll("[data-credential-id]")).map((row) => row.dataset.credentialId);
          if (PublicKeyCredential.signalAllAcceptedCredentials) {
            PublicKeyCredential.signalAllAcceptedCredentials({ rpId: data.rpId, userId: user.dataset.userId, allAcceptedCredentialIds: ids }).catch(() => {});
          }
          if (PublicKeyCredential.signalCurrentUserDetails) {
            PublicKeyCredential.signalCurrentUserDetails({ rpId: data.rpId, userId: user.dataset.userId, name: user.dataset.name, displayName: user.dataset.displayName }).catch(() => {});
          }
        }
      }
    })();

    """#
}
