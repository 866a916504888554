import FlipbookTestSupport
import Foundation
import FrameCache
import Logging
import Prometheus
import ServiceTestSupport
import Synchronization
import Testing

@testable import FlipbookService
@testable import HTTPServer
@testable import ImageStorage

/// Behaviour behind a proxy: client addresses, readiness while draining, errors of the cache.
@Suite("Proxy and readiness", .ownThreads)
struct ProxyAndReadinessTests {
    func decorator(trusting proxies: [String]) -> ResponseDecorator {
        ResponseDecorator(
            instanceName: "x", trustedProxies: proxies.compactMap(IPAddressRange.init), accessLog: nil,
            metrics: HTTPMetrics(loops: 1))
    }

    func request(from peer: String, forwardedFor: [String]) -> HTTPAccessRecord {
        var headers = HTTPHeaders()
        for value in forwardedFor { headers.add(name: "X-Forwarded-For", value: value) }
        return HTTPAccessRecord(
            method: .GET, path: "/healthz", route: "/healthz", routeIndex: 0, requestHeaders: headers,
            requestID: .none, remoteAddress: HTTPPeerAddress(ip: peer, port: 40000), connectionID: 1,
            loop: 0, status: 200, bodyBytes: 0, duration: .zero)
    }

    @Test func forwardedForIsBelievedOnlyFromTrustedProxies() {
        let d = decorator(trusting: ["127.0.0.1", "10.0.0.0/8"])
        #expect(d.clientAddress(request(from: "127.0.0.1", forwardedFor: ["203.0.113.7"])) == "203.0.113.7")
        #expect(d.clientAddress(request(from: "198.51.100.1", forwardedFor: ["203.0.113.7"])) == "198.51.100.1")
        // A client cannot forge its address by prepending hops: the nearest untrusted hop wins.
        #expect(
            d.clientAddress(request(from: "127.0.0.1", forwardedFor: ["1.2.3.4, 203.0.113.7, 10.0.0.5"]))
                == "203.0.113.7")
        #expect(d.clientAddress(request(from: "127.0.0.1", forwardedFor: [])) == "127.0.0.1")
        #expect(
            decorator(trusting: []).clientAddress(request(from: "127.0.0.1", forwardedFor: ["203.0.113.7"]))
                == "127.0.0.1")
    }

    @Test func readinessIs503WhileDraining() throws {
        let directory = TestService.temporaryDirectory()
        let store = try ImageStore(dataDirectory: directory)
        let cache = FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 1 << 20, decodeThreads: 1))
        defer { cache.shutdown() }
        let draining = DrainFlag()
        var settings = FlipbookSettings()
        settings.storage.dataDir = directory
        let api = OperationsRoutes(
            store: store, cache: cache,
            derived: DerivedProducts(
                settings: settings, images: store, cache: cache, budget: nil, concurrency: 1, logger: Logger(label: "t")),
            registry: PrometheusCollectorRegistry(),
            decorator: ResponseDecorator(instanceName: "t", trustedProxies: [], accessLog: nil, metrics: HTTPMetrics(loops: 1)),
            isDraining: { draining.value }, connectionStatistics: { nil }, adminToken: "", logger: Logger(label: "t"))
        let request = HTTPRequest(method: .GET, target: "/readyz")
        guard case .now(let ready) = api.readiness(request, HTTPResponder { _ in }) else { Issue.record("deferred"); return }
        #expect(ready.status.code == 200)
        draining.value = true
        guard case .now(let notReady) = api.readiness(request, HTTPResponder { _ in }) else { Issue.record("deferred"); return }
        #expect(notReady.status.code == 503)
        #expect(notReady.headers["Content-Type"] == "application/problem+json")
    }

    @Test func cacheErrorsBecomeTheBriefsStatuses() {
        let logger = Logger(label: "t")
        let full = FrameAnswer.problem(.queueFull(retryAfterSeconds: 2), logger: logger)
        #expect(full.status.code == 429)
        #expect(full.headers["Retry-After"] == "2")
        #expect(FrameAnswer.problem(.decodeFailed("x"), logger: logger).status.code == 422)
        #expect(FrameAnswer.problem(.removed, logger: logger).status.code == 404)
        #expect(FrameAnswer.problem(.shuttingDown, logger: logger).status.code == 503)
    }

    @Test func imageNames() {
        #expect(ImageID.validateName("clip-01.gif") == nil)
        #expect(ImageID.validateName("..") != nil)
        #expect(ImageID.validateName("a/b") != nil)
        #expect(ImageID.validateName(String(repeating: "a", count: 129)) != nil)
        #expect(ImageID.validateName(String(repeating: "0f", count: 32)) != nil)
        #expect(!ImageID.isWellFormed("../etc/passwd"))
    }
}

final class DrainFlag: Sendable {
    private let flag = Mutex(false)
    var value: Bool {
        get { flag.withLock { $0 } }
        set { flag.withLock { $0 = newValue } }
    }
}
