import Configuration
import FoundationEssentials

/// A JSON value of the settings file, read with FoundationEssentials' `JSONDecoder`.
enum SettingsJSON: Decodable, Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([SettingsJSON])
    case object([String: SettingsJSON])

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? value.decode(Int.self) {
            self = .int(int)
        } else if let double = try? value.decode(Double.self) {
            self = .double(double)
        } else if let string = try? value.decode(String.self) {
            self = .string(string)
        } else if let array = try? value.decode([SettingsJSON].self) {
            self = .array(array)
        } else {
            self = .object(try value.decode([String: SettingsJSON].self))
        }
    }

    /// The JSON document in `bytes`; its top level must be an object.
    static func document(_ bytes: some Collection<UInt8>) throws(SettingsFileError) -> [String: SettingsJSON] {
        let parsed: SettingsJSON
        do {
            parsed = try JSONDecoder().decode(SettingsJSON.self, from: Data(bytes))
        } catch {
            throw SettingsFileError(description: "it is not valid JSON: \(Self.reason(error))")
        }
        guard case .object(let members) = parsed else {
            throw SettingsFileError(description: "the top-level value of the JSON file must be an object")
        }
        return members
    }

    /// What was wrong with the text, as the decoder says it (no Swift type names).
    private static func reason(_ error: any Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else { return "\(error)" }
        if let underlying = context.underlyingError { return "\(context.debugDescription) (\(underlying))" }
        return context.debugDescription
    }
}

/// The settings file is not what it must be.
struct SettingsFileError: Error, CustomStringConvertible {
    var description: String
}

/// The JSON settings file (`--config`) as swift-configuration's `FileProvider` reads it: nested
/// objects make dot-separated keys; numbers and booleans convert into one another where nothing
/// is lost (an int is read as a double, an integral double as an int, 0/1 as a boolean), as
/// swift-configuration's own `JSONSnapshot` does. Ours because that one parses with Foundation's
/// `JSONSerialization`, which links ICU (34 MB) into the binary; `JSONDecoder` is in
/// FoundationEssentials.
struct SettingsFileSnapshot: FileConfigSnapshot {
    /// Nothing to choose: the file's keys and types are read as they are.
    struct ParsingOptions: FileParsingOptions {
        static var `default`: Self { Self() }
    }

    let providerName: String
    /// Leaf values by dot-separated key.
    let values: [String: SettingsJSON]

    init(data: RawSpan, providerName: String, parsingOptions: ParsingOptions) throws {
        let bytes = data.withUnsafeBytes { Array($0) }
        self.providerName = providerName
        var values: [String: SettingsJSON] = [:]
        var pending = try SettingsJSON.document(bytes).map { ($0.key, $0.value) }
        while let (key, value) = pending.popLast() {
            if case .object(let members) = value {
                pending += members.map { (key + "." + $0.key, $0.value) }
            } else {
                values[key] = value
            }
        }
        self.values = values
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let encodedKey = key.components.joined(separator: ".")
        guard let value = values[encodedKey], value != .null else { return LookupResult(encodedKey: encodedKey, value: nil) }
        guard let content = Self.content(value, as: type) else {
            throw SettingsFileError(description: "config value \(encodedKey) is not convertible to \(type.rawValue)")
        }
        return LookupResult(encodedKey: encodedKey, value: ConfigValue(content, isSecret: false))
    }

    /// `value` as `type`, or nil when it is not one.
    static func content(_ value: SettingsJSON, as type: ConfigType) -> ConfigContent? {
        switch (type, value) {
        case (.string, .string(let string)): return .string(string)
        case (.int, _): return int(value).map { .int($0) }
        case (.double, _): return double(value).map { .double($0) }
        case (.bool, _): return bool(value).map { .bool($0) }
        case (.stringArray, .array(let items)):
            let strings = items.compactMap { item -> String? in if case .string(let s) = item { s } else { nil } }
            return strings.count == items.count ? .stringArray(strings) : nil
        case (.intArray, .array(let items)):
            let ints = items.compactMap(int)
            return ints.count == items.count ? .intArray(ints) : nil
        case (.doubleArray, .array(let items)):
            let doubles = items.compactMap(double)
            return doubles.count == items.count ? .doubleArray(doubles) : nil
        case (.boolArray, .array(let items)):
            let bools = items.compactMap(bool)
            return bools.count == items.count ? .boolArray(bools) : nil
        default: return nil
        }
    }

    private static func int(_ value: SettingsJSON) -> Int? {
        switch value {
        case .int(let int): int
        case .double(let double): Int(exactly: double)
        case .bool(let bool): bool ? 1 : 0
        default: nil
        }
    }

    private static func double(_ value: SettingsJSON) -> Double? {
        switch value {
        case .int(let int): Double(exactly: int)
        case .double(let double): double
        case .bool(let bool): bool ? 1 : 0
        default: nil
        }
    }

    private static func bool(_ value: SettingsJSON) -> Bool? {
        switch value {
        case .bool(let bool): bool
        case .int(let int): int != 0
        case .double(let double): double != 0
        default: nil
        }
    }

    var description: String { "\(providerName)[\(values.count) values]" }

    var debugDescription: String {
        let listed = values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: ", ")
        return "\(providerName)[\(values.count) values: \(listed)]"
    }
}
