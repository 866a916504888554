import Configuration
import FoundationEssentials
import Glibc
import ImageStorage
import SystemPackage
import SystemResources

/// Builds ``FlipbookSettings`` from, lowest to highest precedence: the defaults in code, the JSON
/// file (`Config/flipbook.json` or `--config`), `FLIPBOOK_*` environment variables, and
/// command-line overrides. swift-configuration does the layering; this type adds what a
/// production service needs on top: a value that is present but malformed is an error naming the
/// key and where it came from (never a silent fallback to the default), unknown keys in the file
/// or unknown `FLIPBOOK_*` variables are reported, and the result is validated.
public struct SettingsLoader: Sendable {
    /// Why settings could not be loaded.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// The loaded settings plus what was ignored, to be logged once logging is up.
    public struct Loaded: Sendable {
        public var settings: FlipbookSettings
        public var warnings: [String]
    }

    /// The file read when no `--config` is given; a missing default file is not an error.
    public static let defaultConfigPath = "Config/flipbook.json"

    public var configPath: String?
    public var environment: [String: String]
    /// Key name → value as text, from command-line flags (`--port 9000`, `--set cache.maxBytes=…`).
    public var overrides: [String: String]

    public init(
        configPath: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
        overrides: [String: String] = [:]
    ) {
        self.configPath = configPath
        self.environment = environment
        self.overrides = overrides
    }

    public func load() async throws -> Loaded {
        var warnings: [String] = []
        var providers: [any ConfigProvider] = []

        for name in overrides.keys.sorted() where SettingKeys.key(named: name) == nil {
            throw Failure(description: "unknown setting '\(name)' on the command line")
        }
        providers.append(
            EnvironmentVariablesProvider(
                environmentVariables: Dictionary(uniqueKeysWithValues: overrides.map { (Self.providerName($0.key), $0.value) }),
                secretsSpecifier: .dynamic { key, _ in Self.secretProviderNames.contains(key) }))

        var fromEnvironment: [String: String] = [:]
        for (name, value) in environment where name.hasPrefix("FLIPBOOK_") {
            if let key = SettingKeys.key(forEnvironmentName: name) {
                fromEnvironment[Self.providerName(key.name)] = value
            } else {
                warnings.append("ignoring unknown environment variable \(name)")
            }
        }
        providers.append(
            EnvironmentVariablesProvider(
                environmentVariables: fromEnvironment,
                secretsSpecifier: .dynamic { key, _ in Self.secretProviderNames.contains(key) }))

        let path = configPath ?? Self.defaultConfigPath
        if FileManager.default.fileExists(atPath: path) {
            warnings += try Self.unknownFileKeys(path)
            do {
                providers.append(try await FileProvider<SettingsFileSnapshot>(filePath: FilePath(path)))
            } catch {
                throw Failure(description: "config file \(path): \(error)")
            }
        } else if configPath != nil {
            throw Failure(description: "config file \(path) does not exist")
        }

        let reader = ConfigReader(providers: providers)
        var settings = FlipbookSettings()
        for key in SettingKeys.all {
            try Self.read(key, from: reader, into: &settings, source: describeSource(key, configPath: path))
        }
        Self.applyAWSCredentials(&settings, environment: environment)
        try Self.validate(settings)
        return Loaded(settings: settings, warnings: warnings)
    }

    /// Keys whose values are never logged, under the environment provider's spelling.
    static let secretProviderNames: Set<String> = Set(SettingKeys.all.filter(\.isSecret).map { providerName($0.name) })

    /// The standard AWS variables fill the S3 credentials the settings leave empty.
    static func applyAWSCredentials(_ settings: inout FlipbookSettings, environment: [String: String]) {
        guard settings.storage.s3.accessKeyId.isEmpty, settings.storage.s3.secretAccessKey.isEmpty else { return }
        settings.storage.s3.accessKeyId = environment["AWS_ACCESS_KEY_ID"] ?? ""
        settings.storage.s3.secretAccessKey = environment["AWS_SECRET_ACCESS_KEY"] ?? ""
        if settings.storage.s3.sessionToken.isEmpty {
            settings.storage.s3.sessionToken = environment["AWS_SESSION_TOKEN"] ?? ""
        }
    }

    /// Where a key's value came from, for error messages.
    private func describeSource(_ key: SettingKeys.Key, configPath: String) -> String {
        if overrides[key.name] != nil { return "the command line" }
        if environment[key.environmentName] != nil { return "environment variable \(key.environmentName)" }
        return configPath
    }

    /// swift-configuration's environment provider splits camelCase at word boundaries
    /// (`cache.maxBytes` → `CACHE_MAX_BYTES`); ours does not (`FLIPBOOK_CACHE_MAXBYTES`), so
    /// variables are handed to it under its own spelling.
    static func providerName(_ key: String) -> String {
        var out = ""
        var previousLower = false
        for character in key {
            if character == "." {
                out.append("_")
                previousLower = false
                continue
            }
            if previousLower && character.isUppercase { out.append("_") }
            out += character.uppercased()
            previousLower = character.isLowercase || character.isNumber
        }
        return out
    }

    private static func read(
        _ key: SettingKeys.Key, from reader: ConfigReader,
        into settings: inout FlipbookSettings, source: String
    ) throws {
        let configKey = ConfigKey(key.name.split(separator: ".").map(String.init))
        let present =
            reader.string(forKey: configKey, isSecret: key.isSecret) != nil
            || reader.int(forKey: configKey) != nil || reader.double(forKey: configKey) != nil
            || reader.bool(forKey: configKey) != nil || reader.stringArray(forKey: configKey) != nil
        guard present else { return }
        func invalid(_ expected: String) -> Failure {
            Failure(description: "setting \(key.name) from \(source) is not \(expected)")
        }
        switch key.kind {
        case .int(let path):
            guard let value = reader.int(forKey: configKey) else { throw invalid("an integer") }
            settings[keyPath: path] = value
        case .double(let path):
            guard let value = reader.double(forKey: configKey) else { throw invalid("a number") }
            settings[keyPath: path] = value
        case .string(let path):
            guard let value = reader.string(forKey: configKey, isSecret: key.isSecret) else { throw invalid("a string") }
            settings[keyPath: path] = value
        case .bool(let path):
            guard let value = reader.bool(forKey: configKey) else { throw invalid("true or false") }
            settings[keyPath: path] = value
        case .strings(let path):
            if let value = reader.stringArray(forKey: configKey) {
                settings[keyPath: path] = value.filter { !$0.isEmpty }
            } else if let text = reader.string(forKey: configKey) {
                settings[keyPath: path] = text.split(separator: ",").map {
                    $0.trimmingSpaces()
                }.filter { !$0.isEmpty }
            } else {
                throw invalid("a list of strings")
            }
        }
    }

    /// Keys in the JSON file that no setting reads (typos would otherwise pass unnoticed).
    static func unknownFileKeys(_ path: String) throws -> [String] {
        let members: [String: SettingsJSON]
        do {
            members = try SettingsJSON.document(Data(contentsOf: URL(fileURLWithPath: path)))
        } catch let error as SettingsFileError {
            throw Failure(description: "config file \(path): \(error)")
        } catch {
            throw Failure(description: "config file \(path) cannot be read: \(ErrorText.of(error))")
        }
        var leaves: [String] = []
        func walk(_ value: SettingsJSON, _ prefix: String) {
            if case .object(let dictionary) = value, SettingKeys.key(named: prefix) == nil {
                for (name, child) in dictionary {
                    walk(child, prefix.isEmpty ? name : prefix + "." + name)
                }
            } else {
                leaves.append(prefix)
            }
        }
        walk(.object(members), "")
        return leaves.filter { SettingKeys.key(named: $0) == nil && !$0.hasPrefix("_") && !$0.contains("._") }
            .sorted().map { "ignoring unknown key \($0) in \(path)" }
    }

    /// Values no setting may take.
    static func validate(_ settings: FlipbookSettings) throws {
        try validateServerAndStorage(settings)
        try validateCacheAndLimits(settings)
        try validateOutputs(settings)
        try validateSources(settings)
        try validateUploadsAndProxies(settings)
    }

    /// Fails with `message` unless `condition` holds.
    private static func require(_ condition: Bool, _ message: String) throws {
        if !condition { throw Failure(description: message) }
    }

    /// `server.*` (but its proxies and origins) and `storage.*`.
    private static func validateServerAndStorage(_ settings: FlipbookSettings) throws {
        try require((0...65535).contains(settings.server.port), "server.port must be 0…65535")
        try require(settings.server.eventLoopThreads >= 0, "server.eventLoopThreads must be ≥ 0 (0 = one per usable CPU)")
        try require(settings.server.maxConnections > 0, "server.maxConnections must be > 0")
        try require(settings.server.maxUploadBytes > 0, "server.maxUploadBytes must be > 0")
        try require(settings.server.drainTimeoutSeconds >= 0, "server.drainTimeoutSeconds must be ≥ 0")
        try require(!settings.storage.dataDir.isEmpty, "storage.dataDir must not be empty")
        try require(settings.storage.recheckSeconds > 0, "storage.recheckSeconds must be > 0")
        try require(settings.storage.recordCacheBytes >= 0, "storage.recordCacheBytes must be ≥ 0 (0 = records are not kept)")
        try require(["fs", "s3"].contains(settings.storage.backend), "storage.backend must be fs or s3")
        if settings.storage.backend == "s3" {
            let s3 = settings.storage.s3
            try require(!s3.bucket.isEmpty, "storage.s3.bucket must be set when storage.backend is s3")
            try require(!s3.region.isEmpty, "storage.s3.region must be set when storage.backend is s3")
            try require(
                s3.endpoint.isEmpty || S3Endpoint(s3.endpoint) != nil,
                "storage.s3.endpoint must be http(s)://host[:port] (got '\(s3.endpoint)')")
            try require(
                S3Layout.isValidPrefix(s3.prefix),
                "storage.s3.prefix may contain only letters, digits, '.', '_', '-' and '/', not first")
            try require(
                !s3.accessKeyId.isEmpty && !s3.secretAccessKey.isEmpty,
                "storage.backend s3 needs credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                    + "or storage.s3.accessKeyId and storage.s3.secretAccessKey")
            try require(s3.requestTimeoutSeconds > 0, "storage.s3.requestTimeoutSeconds must be > 0")
            try require(s3.retries >= 0, "storage.s3.retries must be ≥ 0")
            try require(s3.localCacheBytes > 0, "storage.s3.localCacheBytes must be > 0")
            try require(s3.partBytes >= 5 << 20, "storage.s3.partBytes must be at least 5 MiB (S3's smallest part)")
            try require(
                s3.multipartThresholdBytes >= s3.partBytes,
                "storage.s3.multipartThresholdBytes must be at least storage.s3.partBytes")
        }
    }

    /// `cache.*` and `limits.*`.
    private static func validateCacheAndLimits(_ settings: FlipbookSettings) throws {
        try require(settings.cache.maxBytes >= 0, "cache.maxBytes must be ≥ 0 (0 = from the memory limit)")
        try require(
            settings.cache.memoryFraction > 0 && settings.cache.memoryFraction <= 1,
            "cache.memoryFraction must be in (0, 1]")
        try require((0...9).contains(settings.cache.pngCompressionLevel), "cache.pngCompressionLevel must be 0…9")
        try require(settings.cache.window.minimumWindow >= 1, "cache.minimumWindow must be ≥ 1")
        try require(settings.cache.window.lookaheadMs >= 0, "cache.lookaheadMs must be ≥ 0")
        try require(settings.cache.checkpointInterval >= 1, "cache.checkpointInterval must be ≥ 1")
        try require(
            settings.cache.pressureWarningFraction < settings.cache.pressureCriticalFraction,
            "cache.pressureWarningFraction must be below cache.pressureCriticalFraction")
        for (name, value) in [
            ("limits.maxFileBytes", settings.limits.decode.maxFileBytes),
            ("limits.maxFramePixels", settings.limits.decode.maxFramePixels),
            ("limits.maxFrames", settings.limits.decode.maxFrames),
            ("limits.maxTotalPixels", settings.limits.decode.maxTotalPixels),
        ] {
            try require(value > 0, "\(name) must be > 0")
        }
        try require(settings.limits.decode.maxDecodeBytes >= 0, "limits.maxDecodeBytes must be ≥ 0 (0 = from the memory limit)")
        try require(
            (1...16383).contains(settings.limits.maxOutputDimension),
            "limits.maxOutputDimension must be 1…16383 (WebP's largest side)")
        try require(settings.limits.avifFramesPerClient >= 0, "limits.avifFramesPerClient must be 0 (no limit) or more")
    }

    /// `renditions.*`, `derived.*` and `log.*`.
    private static func validateOutputs(_ settings: FlipbookSettings) throws {
        try require(settings.renditions.decodeAheadPerImage >= 0, "renditions.decodeAheadPerImage must be ≥ 0")
        try require(settings.derived.maxBytes > 0, "derived.maxBytes must be > 0")
        try require(settings.derived.maxWaitSeconds >= 0, "derived.maxWaitSeconds must be ≥ 0")
        try require(
            settings.derived.maxOutputBytes > 0 && settings.derived.maxOutputBytes <= settings.derived.maxBytes,
            "derived.maxOutputBytes must be > 0 and at most derived.maxBytes")
        try require(settings.derived.maxSheetPixels > 0, "derived.maxSheetPixels must be > 0")
        do {
            _ = try RenditionPolicy(settings)
        } catch {
            throw Failure(description: error.detail)
        }
        try require(
            ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(settings.log.level),
            "log.level must be one of trace, debug, info, notice, warning, error, critical")
        try require(["text", "json"].contains(settings.log.format), "log.format must be text or json")
    }

    /// `uploads.*`, `server.trustedProxies` and `server.corsOrigins`.
    private static func validateUploadsAndProxies(_ settings: FlipbookSettings) throws {
        for proxy in settings.server.trustedProxies {
            try require(IPAddressRange(proxy) != nil, "server.trustedProxies: '\(proxy)' is not an IP address or CIDR block")
        }
        try require(settings.uploads.maxSessions > 0, "uploads.maxSessions must be > 0")
        try require(settings.uploads.startSeconds > 0, "uploads.startSeconds must be > 0")
        try require(settings.uploads.maxWaitSeconds >= 0, "uploads.maxWaitSeconds must be ≥ 0")
        try require(settings.uploads.aliasSeconds >= 0, "uploads.aliasSeconds must be ≥ 0")
        try require(
            settings.uploads.key.isEmpty || (UploadIDs.key(setting: settings.uploads.key)?.count ?? 0) >= 16,
            "uploads.key must be empty or at least 32 hexadecimal digits (16 bytes)")
        for origin in settings.server.corsOrigins {
            try require(
                CORSPolicy.isValidEntry(origin),
                "server.corsOrigins: '\(origin)' is not * or an origin like https://example.com")
        }
    }
}
