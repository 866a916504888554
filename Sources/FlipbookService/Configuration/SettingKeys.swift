/// The table of every configuration key: its dotted name, the setting it fills and how its
/// value is read. Reading, the environment-variable names, the unknown-key check and the test
/// that `Config/flipbook.json` holds every default all come from this one list.
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
        /// Tokens are never logged.
        var isSecret = false

        /// `FLIPBOOK_` + the name upper-cased with dots as underscores: `FLIPBOOK_CACHE_MAXBYTES`.
        var environmentName: String {
            "FLIPBOOK_" + name.uppercased().replacingDots()
        }
    }

    static let all: [Key] = [
        Key(name: "server.host", kind: .string(\.server.host)),
        Key(name: "server.port", kind: .int(\.server.port)),
        Key(name: "server.eventLoopThreads", kind: .int(\.server.eventLoopThreads)),
        Key(name: "server.maxConnections", kind: .int(\.server.maxConnections)),
        Key(name: "server.maxRequestLineBytes", kind: .int(\.server.maxRequestLineBytes)),
        Key(name: "server.maxHeaderBytes", kind: .int(\.server.maxHeaderBytes)),
        Key(name: "server.maxHeaderFields", kind: .int(\.server.maxHeaderFields)),
        Key(name: "server.maxUploadBytes", kind: .int(\.server.maxUploadBytes)),
        Key(name: "server.headerTimeoutSeconds", kind: .double(\.server.headerTimeoutSeconds)),
        Key(name: "server.bodyIdleTimeoutSeconds", kind: .double(\.server.bodyIdleTimeoutSeconds)),
        Key(name: "server.keepAliveTimeoutSeconds", kind: .double(\.server.keepAliveTimeoutSeconds)),
        Key(name: "server.drainTimeoutSeconds", kind: .double(\.server.drainTimeoutSeconds)),
        Key(name: "server.instanceName", kind: .string(\.server.instanceName)),
        Key(name: "server.trustedProxies", kind: .strings(\.server.trustedProxies)),
        Key(name: "server.corsOrigins", kind: .strings(\.server.corsOrigins)),
        Key(name: "storage.backend", kind: .string(\.storage.backend)),
        Key(name: "storage.dataDir", kind: .string(\.storage.dataDir)),
        Key(name: "storage.libraryDirs", kind: .strings(\.storage.libraryDirs)),
        Key(name: "storage.maxPageSize", kind: .int(\.storage.maxPageSize)),
        Key(name: "storage.recheckSeconds", kind: .double(\.storage.recheckSeconds)),
        Key(name: "storage.s3.endpoint", kind: .string(\.storage.s3.endpoint)),
        Key(name: "storage.s3.region", kind: .string(\.storage.s3.region)),
        Key(name: "storage.s3.bucket", kind: .string(\.storage.s3.bucket)),
        Key(name: "storage.s3.prefix", kind: .string(\.storage.s3.prefix)),
        Key(name: "storage.s3.pathStyle", kind: .bool(\.storage.s3.pathStyle)),
        Key(name: "storage.s3.requestTimeoutSeconds", kind: .double(\.storage.s3.requestTimeoutSeconds)),
        Key(name: "storage.s3.retries", kind: .int(\.storage.s3.retries)),
        Key(name: "storage.s3.accessKeyId", kind: .string(\.storage.s3.accessKeyId), isSecret: true),
        Key(name: "storage.s3.secretAccessKey", kind: .string(\.storage.s3.secretAccessKey), isSecret: true),
        Key(name: "storage.s3.sessionToken", kind: .string(\.storage.s3.sessionToken), isSecret: true),
        Key(name: "storage.s3.localCacheBytes", kind: .int(\.storage.s3.localCacheBytes)),
        Key(name: "storage.s3.multipartThresholdBytes", kind: .int(\.storage.s3.multipartThresholdBytes)),
        Key(name: "storage.s3.partBytes", kind: .int(\.storage.s3.partBytes)),
        Key(name: "cache.maxBytes", kind: .int(\.cache.maxBytes)),
        Key(name: "cache.memoryFraction", kind: .double(\.cache.memoryFraction)),
        Key(name: "cache.decodeThreads", kind: .int(\.cache.decodeThreads)),
        Key(name: "cache.wholeAnimationBytes", kind: .int(\.cache.wholeAnimationBytes)),
        Key(name: "cache.minimumWindow", kind: .int(\.cache.minimumWindow)),
        Key(name: "cache.lookaheadMs", kind: .int(\.cache.lookaheadMs)),
        Key(name: "cache.pngCompressionLevel", kind: .int(\.cache.pngCompressionLevel)),
        Key(name: "cache.checkpointInterval", kind: .int(\.cache.checkpointInterval)),
        Key(name: "cache.maxWaitingRequests", kind: .int(\.cache.maxWaitingRequests)),
        Key(name: "cache.pressureWarningFraction", kind: .double(\.cache.pressureWarningFraction)),
        Key(name: "cache.pressureCriticalFraction", kind: .double(\.cache.pressureCriticalFraction)),
        Key(name: "cache.pressurePollSeconds", kind: .double(\.cache.pressurePollSeconds)),
        Key(name: "cache.frameArena", kind: .bool(\.cache.frameArena)),
        Key(name: "limits.maxFileBytes", kind: .int(\.limits.maxFileBytes)),
        Key(name: "limits.maxFramePixels", kind: .int(\.limits.maxFramePixels)),
        Key(name: "limits.maxFrames", kind: .int(\.limits.maxFrames)),
        Key(name: "limits.maxTotalPixels", kind: .int(\.limits.maxTotalPixels)),
        Key(name: "limits.maxDecodeBytes", kind: .int(\.limits.maxDecodeBytes)),
        Key(name: "limits.maxOutputDimension", kind: .int(\.limits.maxOutputDimension)),
        Key(name: "renditions.defaultFormat", kind: .string(\.renditions.defaultFormat)),
        Key(name: "renditions.presets", kind: .strings(\.renditions.presets)),
        Key(name: "renditions.allowArbitrary", kind: .bool(\.renditions.allowArbitrary)),
        Key(name: "renditions.decodeAheadPerImage", kind: .int(\.renditions.decodeAheadPerImage)),
        Key(name: "derived.maxBytes", kind: .int(\.derived.maxBytes)),
        Key(name: "derived.maxWaitSeconds", kind: .double(\.derived.maxWaitSeconds)),
        Key(name: "derived.maxOutputBytes", kind: .int(\.derived.maxOutputBytes)),
        Key(name: "derived.maxSheetPixels", kind: .int(\.derived.maxSheetPixels)),
        Key(name: "auth.adminToken", kind: .string(\.auth.adminToken), isSecret: true),
        Key(name: "auth.uploadToken", kind: .string(\.auth.uploadToken), isSecret: true),
        Key(name: "ui.dir", kind: .string(\.ui.dir)),
        Key(name: "log.level", kind: .string(\.log.level)),
        Key(name: "log.format", kind: .string(\.log.format)),
        Key(name: "log.accessLog", kind: .bool(\.log.accessLog)),
        Key(name: "log.accessLogFile", kind: .string(\.log.accessLogFile)),
        Key(name: "sources.allowedPrefixes", kind: .strings(\.sources.allowedPrefixes)),
        Key(name: "sources.allowedNetworks", kind: .strings(\.sources.allowedNetworks)),
        Key(name: "sources.maxRedirects", kind: .int(\.sources.maxRedirects)),
        Key(name: "sources.maxBytes", kind: .int(\.sources.maxBytes)),
        Key(name: "sources.timeoutSeconds", kind: .double(\.sources.timeoutSeconds)),
        Key(name: "sources.refreshSeconds", kind: .double(\.sources.refreshSeconds)),
        Key(name: "security.urlKeys", kind: .strings(\.security.urlKeys), isSecret: true),
        Key(name: "security.signedRoutes", kind: .strings(\.security.signedRoutes)),
        Key(name: "uploads.maxSessions", kind: .int(\.uploads.maxSessions)),
        Key(name: "uploads.startSeconds", kind: .double(\.uploads.startSeconds)),
        Key(name: "uploads.maxWaitSeconds", kind: .double(\.uploads.maxWaitSeconds)),
        Key(name: "uploads.aliasSeconds", kind: .double(\.uploads.aliasSeconds)),
        Key(name: "uploads.key", kind: .string(\.uploads.key), isSecret: true),
    ]

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
