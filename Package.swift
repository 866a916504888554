// swift-tools-version: 6.2
// Flipbook: an HTTP microservice that serves the composited frames of animated images.
// One module per layer (see README "Architecture"); dependencies point down only.
// Linux only: epoll, memfd, sendfile, cgroups and glibc's malloc are what it is built on, so no
// other platform is declared.

import PackageDescription

// Swift 6 language mode, and no warnings: a warning fails the build (here and in CI).
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

// The request path (parser and server) in release builds: no run-time exclusivity checks. Each
// access to a connection's or parser's stored properties otherwise costs a call that records it
// in a thread-local set (about 25 per request, 6% of a cached frame's instructions). Debug builds,
// which the tests run, keep the checks, so an overlapping access still fails there.
let requestPathSettings: [SwiftSetting] =
    strictSettings + [
        .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))
    ]

let package = Package(
    name: "Flipbook",
    products: [
        .executable(name: "flipbook", targets: ["flipbook"]),
        .library(name: "AnimatedImage", targets: ["AnimatedImage"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "FrameCache", targets: ["FrameCache"]),
        .library(name: "ImageStorage", targets: ["ImageStorage"]),
        .library(name: "FlipbookService", targets: ["FlipbookService"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // No traits: its JSON one reads files with Foundation's JSONSerialization, which links ICU
        // (34 MB); the settings file is read by SettingsFileSnapshot instead.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: []),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
    ],
    targets: [
        // System libraries from Debian (libgif-dev, libwebp-dev, libpng-dev, zlib1g-dev,
        // libdeflate-dev).
        .systemLibrary(
            name: "CGIF", path: "Sources/CGIF",
            providers: [.apt(["libgif-dev"])]),
        .systemLibrary(
            name: "CWebP", path: "Sources/CWebP", pkgConfig: "libwebpdemux",
            providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(
            name: "CPNG", path: "Sources/CPNG", pkgConfig: "libpng16",
            providers: [.apt(["libpng-dev"])]),
        .systemLibrary(
            name: "CZlib", path: "Sources/CZlib",
            providers: [.apt(["zlib1g-dev"])]),
        // libdeflate compresses the PNGs Flipbook writes (about twice as fast as zlib).
        .systemLibrary(
            name: "CDeflate", path: "Sources/CDeflate", pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]),
        // The one C function through which Swift scales frames: Flipbook's own Lanczos-3
        // reductions (the largest box-shrunk first), pixman (libpixman-1-dev) for enlargements
        // (BENCHMARKS.md, "Resampling library").
        .target(
            name: "CResample", path: "Sources/CResample",
            cSettings: [.unsafeFlags(["-I/usr/include/pixman-1"])],
            linkerSettings: [.linkedLibrary("pixman-1"), .linkedLibrary("m")]),
        // libcurl's C API (libcurl4-openssl-dev): the outbound HTTP client (S3, sources), for its
        // connect-time hook (CURLOPT_OPENSOCKETFUNCTION) and pinned name resolution (CURLOPT_RESOLVE).
        .systemLibrary(
            name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        // SQLite (libsqlite3-dev): the ordered index of stored ids that listing pages through
        // (storage.backend = fs), shared by the replicas of a data directory.
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]),
        // libavif (libavif-dev), with libaom as its AV1 encoder: AVIF previews. Not through
        // pkg-config: its only flag, -DAVIF_DLL, is for Windows DLLs, and SwiftPM warns of it.
        .systemLibrary(
            name: "CAVIF", path: "Sources/CAVIF",
            providers: [.apt(["libavif-dev"])]),
        // libx264 (libx264-dev): the H.264 encoder of MP4 previews (GPL-2.0-or-later:
        // docs/DEPLOYMENT.md, "Licences").
        .systemLibrary(
            name: "CX264", path: "Sources/CX264",
            providers: [.apt(["libx264-dev"])]),
        // libvpx (libvpx-dev): the VP9 encoder of WebM previews, in Flipbook's own WebM muxer.
        .systemLibrary(
            name: "CVPX", path: "Sources/CVPX",
            providers: [.apt(["libvpx-dev"])]),
        // Linux system calls Glibc does not import: sched_getaffinity (the CPU limit), memfd_create
        // and hole punching (the frame cache's arena).
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        // glibc's malloc.h (malloc_trim, mallopt), to hand freed memory back.
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),

        // Facts about the machine and the container that sizes follow: the CPUs the process may
        // use (cgroup quota and affinity), where its cgroup lives; freed memory handed back.
        .target(
            name: "SystemResources",
            dependencies: ["CLinux", "CMalloc"],
            swiftSettings: strictSettings),

        // Formats → frame descriptors; decoders; one compositor; timeline; PNG and WebP encoding;
        // renditions (the size rule, scaling).
        .target(
            name: "AnimatedImage",
            dependencies: ["CGIF", "CWebP", "CPNG", "CZlib", "CDeflate", "CResample", "CAVIF", "SystemResources"],
            swiftSettings: strictSettings),

        // The animation's frames in formats beyond WebP: AVIF image sequences (libavif, libaom)
        // MP4 (H.264 by libx264, in Flipbook's own ISO-BMFF muxer) and WebM (VP9 by libvpx, in
        // Flipbook's own Matroska muxer).
        .target(
            name: "AnimationEncoding",
            dependencies: ["AnimatedImage", "CAVIF", "CX264", "CVPX"],
            swiftSettings: strictSettings),

        // The shared frame cache: one byte budget, decode-ahead windows, background decoding,
        // memory pressure.
        .target(
            name: "FrameCache",
            dependencies: [
                "AnimatedImage", "CLinux", "CMalloc", "SystemResources",
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings),

        // The HTTP/1.1 request parser: a state machine over bytes, standard library only (the fuzz
        // target builds from it as it is).
        .target(
            name: "HTTPParsing",
            swiftSettings: requestPathSettings),

        // The rules a source URL must pass: URL and address parsing (every numeric IPv4 form),
        // address classes, CIDR blocks, prefixes. Standard library only (fuzzed as it is).
        .target(
            name: "SourceRules",
            swiftSettings: strictSettings),

        // Signed URLs: HMAC-SHA256 over path and query (imgproxy's scheme in query parameters).
        .target(
            name: "URLSigning",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings),

        // Outbound HTTP: the one libcurl client of S3 and of sources fetched by URL, and the
        // source fetcher (address checks at connect time, pinned resolution, redirects by hand).
        .target(
            name: "OutboundHTTP",
            dependencies: ["CCurl", "SourceRules", "SystemResources"],
            swiftSettings: strictSettings),

        // HTTP/1.1 on POSIX sockets and epoll; knows nothing of images.
        .target(
            name: "HTTPServer",
            dependencies: [
                "HTTPParsing", "SystemResources",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: requestPathSettings),

        // The image store: records, originals and derived products, content-addressed and durable,
        // in a data directory (with its SQLite listing index) or an S3 bucket (SigV4 over
        // OutboundHTTP) with a local cache of originals. Knows nothing of HTTP routes.
        .target(
            name: "ImageStorage",
            dependencies: [
                "AnimatedImage", "FrameCache", "OutboundHTTP", "SystemResources", "CLinux", "CSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings),

        // The service: routes and handlers, configuration, auth, metrics, logging.
        .target(
            name: "FlipbookService",
            dependencies: [
                "AnimatedImage", "AnimationEncoding", "FrameCache", "HTTPServer", "ImageStorage", "OutboundHTTP",
                "SystemResources", "SourceRules", "URLSigning",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings),

        // The command-line tool: serve | info | frames | frame | healthcheck.
        .executableTarget(
            name: "flipbook",
            dependencies: [
                "AnimatedImage", "AnimationEncoding", "FlipbookService", "SystemResources", "URLSigning",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings),

        // A minimal server of in-memory payloads for `make bench-http` (side by side with nginx).
        .executableTarget(
            name: "http-bench-server",
            dependencies: ["HTTPServer"],
            path: "Benchmarks/HTTPBenchServer",
            swiftSettings: strictSettings),

        // `make bench-sign`: the cost of verifying a signed request URL.
        .executableTarget(
            name: "sign-bench",
            dependencies: ["URLSigning", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/SignBench",
            swiftSettings: strictSettings),

        // `make bench-cache-scale`: what a cold frame costs the frame cache as it holds more
        // images (issue 37), in process.
        .executableTarget(
            name: "cache-bench",
            dependencies: ["FrameCache", "AnimatedImage", "SystemResources"],
            path: "Benchmarks/CacheBench",
            swiftSettings: strictSettings),

        // What every test target shares: the corpus, a seeded generator, a raw HTTP client, a
        // clock moved by hand, an origin server, a hanging name resolver and moto's S3 server on
        // loopback.
        .target(
            name: "FlipbookTestSupport",
            dependencies: ["OutboundHTTP", "SourceRules", "SystemResources"],
            path: "Tests/FlipbookTestSupport",
            swiftSettings: strictSettings),
        // What the service's and the command line's tests share: a whole service on loopback.
        .target(
            name: "ServiceTestSupport",
            dependencies: [
                "FlipbookService", "OutboundHTTP", "SystemResources", "FlipbookTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ServiceTestSupport",
            swiftSettings: strictSettings),

        // One test target per module.
        .testTarget(
            name: "SystemResourcesTests",
            dependencies: ["SystemResources", "FlipbookTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "AnimatedImageTests",
            dependencies: ["AnimatedImage", "CPNG", "CZlib", "CResample", "FlipbookTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "AnimationEncodingTests",
            dependencies: ["AnimationEncoding", "AnimatedImage", "CAVIF", "FlipbookTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "FrameCacheTests",
            dependencies: ["FrameCache", "AnimatedImage", "SystemResources", "FlipbookTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "HTTPParsingTests",
            dependencies: ["HTTPParsing"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "SourceRulesTests",
            dependencies: ["SourceRules"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "URLSigningTests",
            dependencies: ["URLSigning", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings),
        .testTarget(
            name: "OutboundHTTPTests",
            dependencies: ["OutboundHTTP", "SourceRules", "FlipbookTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", "FlipbookTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ImageStorageTests",
            dependencies: [
                "ImageStorage", "AnimatedImage", "SystemResources", "FlipbookTestSupport",
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "FlipbookServiceTests",
            dependencies: [
                "FlipbookService", "FrameCache", "HTTPServer", "ImageStorage", "AnimatedImage", "SystemResources",
                "FlipbookTestSupport", "ServiceTestSupport", "OutboundHTTP", "SourceRules", "URLSigning",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSettings),
        // The `flipbook` executable as a user runs it (the built product, next to the tests).
        .testTarget(
            name: "FlipbookCLITests",
            dependencies: [
                "AnimatedImage", "FlipbookService", "ImageStorage", "URLSigning", "FlipbookTestSupport", "ServiceTestSupport",
            ],
            swiftSettings: strictSettings),
    ]
)
