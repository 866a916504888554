/// The configuration reference: every setting's key, environment variable, default and meaning,
/// made from ``SettingKeys`` and the defaults of ``FlipbookSettings`` (which `Config/flipbook.json`
/// mirrors). `flipbook settings` prints it; docs/configuration.md holds its Markdown form between
/// its markers, and a test keeps that equal to this (`make docs` rewrites it).
public enum SettingsReference {
    /// The tables of docs/configuration.md, one per top-level section (`server.*`, `storage.*`, …),
    /// in the order of `Config/flipbook.json`.
    public static func markdown() -> String {
        sections().map { section, keys in
            var table = "### `\(section).*`\n\n| key | environment variable | default | meaning |\n|---|---|---|---|\n"
            for key in keys {
                table += "| `\(key.name)` | `\(key.environmentName)` | `\(defaultText(of: key))` | \(cell(meaning(of: key))) |\n"
            }
            return table
        }.joined(separator: "\n")
    }

    /// The same for a terminal: each key with its default and its variable, its meaning below it.
    public static func text(width: Int = 100) -> String {
        SettingKeys.all.map { key in
            "\(key.name) = \(defaultText(of: key))    (\(key.environmentName))\n"
                + wrapped(meaning(of: key), indent: "    ", width: width)
        }.joined()
    }

    /// A key's default as the reference shows it: numbers and booleans as JSON writes them, strings
    /// as they are (`""` when empty), lists as JSON arrays.
    static func defaultText(of key: SettingKeys.Key, in settings: FlipbookSettings = FlipbookSettings()) -> String {
        switch key.kind {
        case .int(let path): return String(settings[keyPath: path])
        case .double(let path):
            let value = settings[keyPath: path]
            return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        case .string(let path):
            let value = settings[keyPath: path]
            return value.isEmpty ? "\"\"" : value
        case .bool(let path): return String(settings[keyPath: path])
        case .strings(let path): return "[" + settings[keyPath: path].map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        }
    }

    static func meaning(of key: SettingKeys.Key) -> String {
        key.isSecret ? key.summary + ". Secret: never logged" : key.summary
    }

    /// The keys grouped by their first component, in order.
    private static func sections() -> [(String, [SettingKeys.Key])] {
        var result: [(String, [SettingKeys.Key])] = []
        for key in SettingKeys.all {
            let section = String(key.name.prefix { $0 != "." })
            if result.last?.0 == section {
                result[result.count - 1].1.append(key)
            } else {
                result.append((section, [key]))
            }
        }
        return result
    }

    /// A Markdown table cell: a `|` would end it.
    private static func cell(_ text: String) -> String {
        text.replacing("|", with: "\\|")
    }

    private static func wrapped(_ text: String, indent: String, width: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && indent.count + line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += line.isEmpty ? String(word) : " " + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.map { indent + $0 + "\n" }.joined()
    }
}
