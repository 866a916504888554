/// The table of every configuration key: its dotted name, the setting it fills, how its value is
/// read and what it does. Reading, the environment-variable names, the unknown-key check, the test
/// that `Config/flipbook.json` holds every default and the configuration reference
/// (``SettingsReference``: `flipbook settings`, docs/configuration.md) all come from this one list.
/// The keys themselves are listed by section in the `SettingKeys+*.swift` files beside this one.
enum SettingKeys {
    /// One configuration key.
    struct Key: Sendable {
        enum Kind: Sendable {
            case int(WritableKeyPath<FlipbookSettings, Int> & Sendable)
            case double(WritableKeyPath<FlipbookSettings, Double> & Sendable)
            case string(WritableKeyPath<FlipbookSettings, String> & Sendable)
            case bool(WritableKeyPath<FlipbookSettings, Bool> & Sendable)
            case strings(WritableKeyPath<FlipbookSettings, [String]> & Sendable)
        }

        /// Dotted camelCase, e.g. `cache.maxBytes`.
        let name: String
        let kind: Kind
        /// What the setting does, for an operator: one sentence or a few, Markdown inline code
        /// allowed; the configuration reference prints it beside the key and its default.
        let summary: String
        /// Tokens are never logged.
        var isSecret = false

        /// `FLIPBOOK_` + the name upper-cased with dots as underscores: `FLIPBOOK_CACHE_MAXBYTES`.
        var environmentName: String {
            "FLIPBOOK_" + name.uppercased().replacingDots()
        }
    }

    /// Every key, in the order of `Config/flipbook.json` and of the configuration reference.
    static let all: [Key] = server + storage + decoding + products + service

    static func key(named name: String) -> Key? {
        all.first { $0.name == name }
    }

    static func key(forEnvironmentName name: String) -> Key? {
        all.first { $0.environmentName == name }
    }
}

extension String {
    func replacingDots() -> String {
        String(map { $0 == "." ? "_" : $0 })
    }
}
