import Foundation
import SignetAuth
import SignetCurl
import SignetServer
import SignetTestSupport
import Testing

/// `relying_party.public_suffix_list`: an RP ID the Public Suffix List names (`herokuapp.com`
/// for `https://myapp.herokuapp.com`) makes browsers refuse every ceremony, so the start refuses
/// it first, and `signet doctor` says what it checked against.
@Suite struct PublicSuffixTests {
    static func list(_ text: String) throws -> String {
        let path = Scratch.directory.appendingPathComponent("psl-\(UUID()).dat").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let config = #"{"issuer": "https://auth.example.com", "clients": [{"client_id": "x"}], "relying_party": {"id": "herokuapp.com", "origins": ["https://myapp.herokuapp.com"]}}"#

    @Test("an RP ID the list names is refused with the origin's own domain to use instead; that domain loads, with the list kept")
    func refused() throws {
        let list = try Self.list("com\nherokuapp.com\n")
        let file = try ConfigurationTests.write(Self.config)
        #expect { _ = try ConfigurationLoader.load(file: file, environment: ["SIGNET_RELYING_PARTY_PUBLIC_SUFFIX_LIST": list]) } throws: {
            "\($0)" == "relying_party.id \"herokuapp.com\" is a public suffix (listed in \(list)), which browsers refuse as an RP ID: use your own domain under it, myapp.herokuapp.com"
        }
        let own = try ConfigurationLoader.load(file: file, environment: ["SIGNET_RELYING_PARTY_PUBLIC_SUFFIX_LIST": list, "SIGNET_RELYING_PARTY_ID": "myapp.herokuapp.com"])
        #expect(own.rpID == "myapp.herokuapp.com" && own.publicSuffixList?.path == list && own.publicSuffixList?.list.count == 2)
        // With no origin under it to name, the message gives the shape.
        let bare = try ConfigurationTests.write(#"{"issuer": "https://herokuapp.com", "clients": [{"client_id": "x"}], "relying_party": {"id": "herokuapp.com", "origins": ["https://herokuapp.com"]}}"#)
        #expect { _ = try ConfigurationLoader.load(file: bare, environment: ["SIGNET_RELYING_PARTY_PUBLIC_SUFFIX_LIST": list]) } throws: {
            "\($0)".hasSuffix("use your own domain under it, such as yours.herokuapp.com")
        }
    }

    @Test("a list named but missing, or holding no rule, is refused at load; a list changed on disk is read again")
    func listFile() throws {
        let file = try ConfigurationTests.write(Self.config)
        let missing = Scratch.directory.appendingPathComponent("no-such-list-\(UUID())").path
        #expect { _ = try ConfigurationLoader.load(file: file, environment: ["SIGNET_RELYING_PARTY_PUBLIC_SUFFIX_LIST": missing]) } throws: {
            "\($0)" == "cannot read relying_party.public_suffix_list \(missing)"
        }
        let empty = try Self.list("// nothing but a comment\n")
        #expect { _ = try ConfigurationLoader.load(file: file, environment: ["SIGNET_RELYING_PARTY_PUBLIC_SUFFIX_LIST": empty]) } throws: {
            "\($0)".hasPrefix("relying_party.public_suffix_list \(empty) holds no rule")
        }
        let list = try Self.list("herokuapp.com\n")
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(file: file, environment: ["SIGNET_RELYING_PARTY_PUBLIC_SUFFIX_LIST": list]) }
        try Data("org\n".utf8).write(to: URL(fileURLWithPath: list))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: list)
        let loaded = try ConfigurationLoader.load(file: file, environment: ["SIGNET_RELYING_PARTY_PUBLIC_SUFFIX_LIST": list])
        #expect(loaded.rpID == "herokuapp.com" && loaded.publicSuffixList?.list.lists("org") == true)
    }

    @Test("by default, the list Debian's publicsuffix package installs (scripts/bootstrap.sh installs it)")
    func debianByDefault() throws {
        let file = try ConfigurationTests.write(Self.config)
        #expect { _ = try ConfigurationLoader.load(file: file, environment: [:]) } throws: {
            "\($0)".contains("is a public suffix (listed in \(PublicSuffixList.debianPath))")
        }
        let own = try ConfigurationLoader.load(file: file, environment: ["SIGNET_RELYING_PARTY_ID": "myapp.herokuapp.com"])
        #expect(own.publicSuffixList?.path == PublicSuffixList.debianPath)
    }

    @Test("signet doctor's rp_id: the registrable domain and the list it was read from; a listed suffix fails with its fix; no list is a note; a development RP ID passes")
    func doctor() throws {
        var configuration = TestServer.configuration()
        configuration.publicSuffixList = (try #require(PublicSuffixList(text: "test\ngithub.io\n")), "/srv/psl.dat")
        func check() throws -> DoctorCheck { try #require(Doctor(configuration: configuration, options: HTTPSOptions()).configurationChecks().first { $0.name == "rp_id" }) }
        let passed = try check()
        #expect(passed.status == .pass && passed.detail == "signet.test has the registrable domain signet.test, under the public suffix test (/srv/psl.dat, 2 rules)")
        configuration.rpID = "github.io"
        let listed = try check()
        #expect(listed.status == .fail && listed.detail == "github.io is a public suffix (listed in /srv/psl.dat): browsers refuse it as an RP ID")
        #expect(listed.fix == "set relying_party.id to your own domain under github.io, the one your origins share")
        configuration.publicSuffixList = nil
        let none = try check()
        #expect(none.status == .note && none.detail.hasPrefix("no Public Suffix List (\(PublicSuffixList.debianPath) is not there)"))
        configuration.rpID = "localhost"
        #expect(try check().status == .pass)
    }
}
