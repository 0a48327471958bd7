@testable import SignetAuth
import Testing

/// The names a `User-Agent` gives a browser's session and a passkey made in it: the browser and
/// the system, each as far as the text tells them, never a browser built on another's engine
/// under that engine's name.
@Suite struct BrowserNameTests {
    static let named: [(agent: String, name: String)] = [
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome · Linux"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", "Safari · macOS"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", "Safari · iOS"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1", "Chrome · iOS"),
        ("Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15", "Firefox · iOS"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) EdgiOS/131.0.2903.68 Mobile/15E148 Safari/605.1.15", "Edge · iOS"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge · Windows"),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 EdgA/131.0.0.0", "Edge · Android"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0", "Opera · Windows"),
        ("Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36", "Samsung Internet · Android"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox · Windows"),
        ("Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0", "Firefox · Android"),
    ]

    @Test("browsers and their systems, those on another's engine by their own name")
    func browsers() {
        for (agent, name) in Self.named {
            #expect(Ceremonies.browserName(agent) == name, "\(agent)")
            #expect(Ceremonies.knownBrowserName(agent) == name, "\(agent)")
        }
    }

    @Test("what names no browser: the system alone when it is told, else Browser; a tool's or an app's is no browser")
    func others() {
        #expect(Ceremonies.browserName(nil) == "Browser" && Ceremonies.knownBrowserName(nil) == nil)
        #expect(Ceremonies.browserName("curl/8.5.0") == "Browser" && Ceremonies.knownBrowserName("curl/8.5.0") == nil)
        #expect(Ceremonies.browserName("Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240905.003)") == "Browser · Android")
        #expect(Ceremonies.knownBrowserName("Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240905.003)") == nil)
        // Signet's SDK: its system, from a list, and never a browser.
        #expect(Ceremonies.browserParts("SignetClient (iOS 18.1)") == (nil, "iOS"))
        #expect(Ceremonies.browserParts("SignetClient (visionOS 2.1)") == (nil, "visionOS"))
        #expect(Ceremonies.browserParts("SignetClient (Linux)") == (nil, "Linux"))
        #expect(Ceremonies.browserParts("SignetClient (<b>x</b> 1)") == (nil, nil))
        #expect(Ceremonies.browserParts("SignetClient (") == (nil, nil))
    }
}
