/// `/assets/signet.css`: the pages' one stylesheet. One column that fits a phone (360 px) and
/// widens to a card on a desktop; visible focus; the system's fonts; dark mode.
public enum Stylesheet {
    public static let source = """
    :root { --fg: #1b1f24; --muted: #5b6470; --bg: #f4f5f7; --card: #ffffff; --line: #d9dde3; --accent: #2454d6; --accent-fg: #ffffff;
      --danger: #b3261e; --ok: #1e6b35; color-scheme: light dark; }
    @media (prefers-color-scheme: dark) { :root { --fg: #e8eaed; --muted: #a4abb5; --bg: #15171a; --card: #1f2226; --line: #3a3f46; --accent: #7aa2ff;
      --accent-fg: #0b1020; --danger: #ff8a80; --ok: #8fd19e; } }
    * { box-sizing: border-box; }
    html { -webkit-text-size-adjust: 100%; }
    body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
    #page { max-width: 34rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
    .brand { display: flex; align-items: center; gap: .5rem; font-weight: 600; margin: 0 0 1rem; }
    .mark { width: 1.25rem; height: 1.25rem; border-radius: .35rem; background: var(--brand, var(--accent)); display: inline-block; }
    .logo { display: block; height: 2.5rem; width: auto; max-width: 14rem; object-fit: contain; }
    .card { background: var(--card); border: 1px solid var(--line); border-radius: .75rem; padding: 1.5rem; }
    h1 { font-size: 1.5rem; margin: 0 0 1rem; line-height: 1.25; }
    h2 { font-size: 1.1rem; margin: 1.75rem 0 .5rem; }
    label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
    input { width: 100%; font: inherit; padding: .65rem .75rem; border: 1px solid var(--line); border-radius: .5rem; background: var(--card); color: var(--fg); }
    button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .65rem 1rem; border-radius: .5rem; border: 1px solid var(--line);
      background: var(--card); color: var(--fg); cursor: pointer; text-decoration: none; text-align: center; min-height: 2.75rem; }
    .primary { background: var(--brand, var(--accent)); color: var(--brand-fg, var(--accent-fg)); border-color: var(--brand, var(--accent)); }
    .danger { color: var(--danger); }
    .link { border: 0; background: none; color: var(--accent); padding: .25rem 0; min-height: 0; font-weight: 400; text-decoration: underline; }
    .wide { display: block; width: 100%; margin-top: 1rem; }
    :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
    a { color: var(--accent); }
    .divider { display: flex; align-items: center; gap: .75rem; color: var(--muted); margin: 1.25rem 0 0; }
    .divider::before, .divider::after { content: ""; flex: 1; border-top: 1px solid var(--line); }
    .message { padding: .75rem 1rem; border-radius: .5rem; margin: 0 0 1rem; }
    .error { background: color-mix(in srgb, var(--danger) 12%, transparent); color: var(--danger); }
    .notice { background: color-mix(in srgb, var(--ok) 12%, transparent); color: var(--ok); }
    .status { min-height: 1.5rem; color: var(--muted); margin: .5rem 0 0; }
    .status:empty { min-height: 0; margin: 0; }
    .alt, .hint, .meta, .who, .empty { color: var(--muted); }
    .meta { display: block; font-size: .875rem; }
    /* A date and time stays on one line: "2026-12-08 00:29 UTC", never broken at its hyphens. */
    .when { white-space: nowrap; }
    .meta.warning { color: var(--danger); font-weight: 600; }
    .rows, .events { list-style: none; padding: 0; margin: 0; }
    .facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0 0 1.25rem; }
    .facts dt { color: var(--muted); } .facts dd { margin: 0; overflow-wrap: anywhere; font-weight: 600; }
    .row { border-top: 1px solid var(--line); padding: .75rem 0; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; justify-content: space-between; }
    .row-main { flex: 1 1 14rem; min-width: 0; overflow-wrap: anywhere; }
    .row-actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
    .inline { display: flex; gap: .5rem; align-items: center; margin: 0; }
    .inline input { width: 10rem; }
    .badge { font-size: .75rem; border: 1px solid var(--accent); color: var(--accent); border-radius: 1rem; padding: 0 .5rem; }
    .events li { padding: .4rem 0; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
    .stepup { border: 1px solid var(--accent); border-radius: .5rem; padding: 1rem; margin: 0 0 1rem; }
    .codes code { font-size: 1.05rem; }
    .erase { margin-top: 1.75rem; border-top: 1px solid var(--line); padding-top: 1rem; }
    .erase summary { cursor: pointer; color: var(--danger); font-weight: 600; }
    .erase button, .fold button, #h-email ~ form button { margin-top: 1rem; }
    .fold summary { cursor: pointer; color: var(--accent); }
    .pair { display: flex; gap: .75rem; margin-top: 1rem; }
    .pair button { flex: 1; }
    footer { margin-top: 1rem; text-align: center; color: var(--muted); font-size: .875rem; }
    footer a[aria-current] { color: var(--fg); font-weight: 600; text-decoration: none; }
    .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
    [hidden] { display: none !important; }
    @media (max-width: 30rem) { #page { padding: 1rem .75rem 2rem; } .card { padding: 1.1rem; } .inline input { width: 100%; } .inline { flex: 1 1 100%; } }

    """

    /// `/assets/brand.css`, after the stylesheet: a deployment's colours as the variables the
    /// stylesheet reads. Each value is a `#rrggbb` the configuration checked; `nil` keeps
    /// Signet's. `accent` and `darkAccent` colour links and focus rings on a light and a dark
    /// card; `background` is the light page's (a dark page keeps its own).
    public static func brand(primary: String?, primaryText: String?, accent: String?, darkAccent: String?, background: String?) -> String {
        func rule(_ pairs: [(String, String?)]) -> String {
            pairs.compactMap { name, value in value.map { "--\(name): \($0);" } }.joined(separator: " ")
        }
        var css = ""
        let root = rule([("brand", primary), ("brand-fg", primaryText)])
        if !root.isEmpty { css += ":root { \(root) }\n" }
        let light = rule([("accent", accent), ("bg", background)]), dark = rule([("accent", darkAccent)])
        if !light.isEmpty { css += "@media (prefers-color-scheme: light) { :root { \(light) } }\n" }
        if !dark.isEmpty { css += "@media (prefers-color-scheme: dark) { :root { \(dark) } }\n" }
        return css
    }
}
