import Foundation
import SignetAuth

extension Doctor {
    /// The RP ID against the Public Suffix List: browsers take only an RP ID with a registrable
    /// domain of its own (HTML's "is a registrable domain suffix of or is equal to", WebAuthn L3
    /// §5.1.3 step 7), so `herokuapp.com` for `myapp.herokuapp.com` fails every ceremony.
    func publicSuffixCheck() -> DoctorCheck {
        let host = rpID.lowercased()
        if host == "localhost" || host.allSatisfy({ $0.isNumber || $0 == "." }) {
            return .pass("rp_id", "\(rpID) is a development RP ID, which browsers take on this machine only")
        }
        guard let (list, path) = configuration.publicSuffixList else {
            return .note("rp_id", "no Public Suffix List (\(PublicSuffixList.debianPath) is not there): only a top-level domain is known to be refused as an RP ID; "
                + "install Debian's publicsuffix package, or set relying_party.public_suffix_list, and run the doctor again")
        }
        guard let domain = list.registrableDomain(of: host) else {
            return .fail("rp_id", "\(rpID) is a public suffix (listed in \(path)): browsers refuse it as an RP ID",
                         fix: "set relying_party.id to your own domain under \(rpID), the one your origins share")
        }
        let suffix = list.publicSuffix(of: host).suffix
        return .pass("rp_id", "\(rpID) has the registrable domain \(domain), under the public suffix \(suffix) (\(path), \(list.count) rules)")
    }
}
