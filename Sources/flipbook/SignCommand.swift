import ArgumentParser
import FlipbookService
import FoundationEssentials
import URLSigning

/// `flipbook sign URL [--expires SECONDS]`: prints URL with `sig` (and `exp`) appended, signed
/// with the first of `security.urlKeys` (from the config file, `FLIPBOOK_SECURITY_URLKEYS` or
/// `--set`), as the server verifies it.
struct SignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign a request URL with the first of security.urlKeys.",
        discussion: """
            URL is a full URL (http://host:8080/frames/ID/3?width=320) or a path with its query \
            (/frames/ID/3?width=320). The signature covers the path and the query in the order \
            given; send them exactly as printed.
            """)

    @Argument(help: "The URL or path (with its query) to sign.")
    var url: String

    @Option(help: "Valid for this many seconds from now (adds exp=…).")
    var expires: Int?

    @Option(help: "The JSON settings file (default: Config/flipbook.json when present).")
    var config: String?

    @Option(name: .customLong("set"), help: "KEY=VALUE overrides a setting (e.g. security.urlKeys=KEY:SALT).")
    var overrides: [String] = []

    func run() async throws {
        var table: [String: String] = [:]
        for entry in overrides {
            guard let equals = entry.firstIndex(of: "=") else {
                throw ValidationError("--set takes KEY=VALUE (got '\(entry)')")
            }
            table[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        let loaded = try await SettingsLoader(configPath: config, overrides: table).load()
        let keys = loaded.settings.security.signingKeys
        guard !keys.isEmpty else {
            throw ValidationError("no signing key: set security.urlKeys (FLIPBOOK_SECURITY_URLKEYS=KEY:SALT)")
        }
        if let expires, expires <= 0 { throw ValidationError("--expires must be a positive number of seconds") }
        // The target starts at the path: after "scheme://authority" when a full URL is given.
        var origin = ""
        var target = url
        if let range = url.firstRange(of: "://") {
            let rest = url[range.upperBound...]
            let slash = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            origin = String(url[..<slash])
            target = String(rest[slash...])
        }
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        let expiry = expires.map { Int(Date().timeIntervalSince1970) + $0 }
        print(origin + URLSignature(keys: keys).sign(target, expires: expiry))
    }
}
