// libFuzzer entry for the source-URL rules, linked with the SourceRules target's sources built as
// a library (see fuzz/run.sh); not part of the Swift package.
//
// The input is text: the first line is read as a source URL (and as a redirect Location against a
// fixed base), the second as an address and as a CIDR block. The run traps when:
//   - parsing crashes (any line, any bytes);
//   - a parsed URL's canonical form does not parse back to the same URL (what is fetched must be
//     what was judged), or carries userinfo in its authority, a space, a backslash or a fragment;
//   - an address's text form does not parse back to the same address, or its class changes;
//   - a block does not contain its own address, or a prefix does not allow its own URL;
//   - an address literal host is judged differently from the same address checked directly.

@testable import SourceRules

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant: \(message())") }
}

let base = try! SourceURL("https://origin.example:8443/dir/a.gif?x=1")
let noNetworks = SourcePolicy()

func checkURL(_ url: SourceURL) {
    let canonical = url.canonical
    let authority = canonical.dropLast(url.pathAndQuery.utf8.count)
    check(!authority.contains("@"), "userinfo in \(canonical)")
    check(!canonical.contains(" ") && !canonical.contains("\\"), "canonical \(canonical)")
    check(!canonical.contains("#"), "fragment kept in \(canonical)")
    guard let again = try? SourceURL(canonical) else { fatalError("fuzz invariant: \(canonical) does not re-parse") }
    check(again == url, "\(canonical) re-parses differently")
    if case .address(let address) = url.host {
        let direct = Result { () throws(SourcePolicy.Refusal) in try noNetworks.check(address) }
        let viaURL = Result { () throws(SourcePolicy.Refusal) in try noNetworks.check(url) }
        check(direct.isSuccess == viaURL.isSuccess, "\(canonical): host judged unlike its address")
    }
    if let prefix = URLPrefix(url.scheme + "://" + url.hostText + ":\(url.port)" + url.path) {
        check(prefix.allows(url), "\(prefix) does not allow \(canonical)")
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    let first = String(lines[0])
    if let url = try? SourceURL(first) { checkURL(url) }
    if let resolved = try? base.resolving(first) { checkURL(resolved) }
    _ = IPv4Literal.parse(Substring(first))
    let second = lines.count > 1 ? String(lines[1]) : first
    if let address = IPAddress(second) {
        let again = IPAddress(address.description)
        check(again == address, "\(second) → \(address) does not round-trip")
        check(AddressClass(address) == AddressClass(again!), "class of \(address) changes")
        check(NetworkBlock(address.description)?.contains(address) == true, "\(address) not in its own block")
    }
    if let block = NetworkBlock(second) {
        check(block.contains(block.address), "\(block) does not contain its address")
        check(NetworkBlock(block.description) == block, "\(block) does not round-trip")
    }
    return 0
}
