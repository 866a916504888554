import HTTPServer
import Testing

@testable import FlipbookService

/// The request-duration histogram counts each response once, in its own bucket, and is written
/// with Prometheus' cumulative buckets (`le` = at most this many seconds).
@Suite struct HTTPMetricsTests {
    private static func record(_ metrics: HTTPMetrics, milliseconds: Double, loop: Int) {
        metrics.record(
            HTTPAccessRecord(
                method: .GET, path: "/frames/x/0", route: "/frames/:id/:index", routeIndex: 3,
                requestHeaders: HTTPHeaders(), requestID: .none, remoteAddress: nil, connectionID: 1, loop: loop,
                status: 200, bodyBytes: 1, duration: .nanoseconds(Int64(milliseconds * 1_000_000))))
    }

    @Test func durationBucketsAreCumulativeWhenWritten() {
        let metrics = HTTPMetrics(loops: 2)
        // Bounds 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000 ms; a value on a bound
        // belongs to that bucket.
        for (milliseconds, loop) in [(0.2, 0), (5, 1), (5.1, 0), (10, 1), (700, 0), (10_000, 1), (12_000, 0)] {
            Self.record(metrics, milliseconds: milliseconds, loop: loop)
        }
        var buffer: [UInt8] = []
        metrics.emit(into: &buffer)
        let text = String(decoding: buffer, as: UTF8.self)
        let prefix = "flipbook_http_request_duration_seconds_bucket{route=\"/frames/:id/:index\",le=\""
        // The bucket lines in order (bounds as swift-prometheus writes them), by their counts.
        let counts = text.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map { $0.split(separator: " ").last! }
        #expect(counts == ["2", "4", "4", "4", "4", "4", "4", "5", "5", "5", "6", "7"], "\(text)")
        #expect(text.contains("\(prefix)+Inf\"} 7\n"))
        #expect(text.contains("flipbook_http_request_duration_seconds_count{route=\"/frames/:id/:index\"} 7\n"))
    }

    @Test func requestCountsSurviveKeysTakingEachOthersPlaces() {
        let metrics = HTTPMetrics(loops: 2)
        // 300 statuses × 2 routes: far more keys than the tally's places, each counted on both
        // loops, in an order that makes keys displace one another again and again.
        for round in 0..<3 {
            for status in 200..<500 {
                for (route, index) in [("/frames/:id/:index", 3), ("/images/:id", 1)] {
                    metrics.record(
                        HTTPAccessRecord(
                            method: .GET, path: "/x", route: route, routeIndex: index, requestHeaders: HTTPHeaders(),
                            requestID: .none, remoteAddress: nil, connectionID: 1, loop: (status + round) % 2,
                            status: status, bodyBytes: 0, duration: .zero))
                }
            }
        }
        #expect(metrics.count(status: 200) == 6)
        #expect(metrics.count(route: "/frames/:id/:index", status: 499) == 3)
        #expect(metrics.count(route: "/images/:id", status: 304) == 3)
        #expect(metrics.totals().requests.all.values.reduce(0, +) == 1_800)
        var buffer: [UInt8] = []
        metrics.emit(into: &buffer)
        let text = String(decoding: buffer, as: UTF8.self)
        #expect(text.contains("flipbook_http_requests_total{method=\"GET\",route=\"/images/:id\",status=\"404\"} 3\n"))
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("flipbook_http_requests_total{") }.count == 600)
    }

    /// A method's label is read by its constant's number: the labels list the constants in the
    /// order they are declared, and a method made from the same token counts the same.
    @Test func methodsAreCountedByTheirConstantsNumber() {
        for (index, method) in HTTPMetrics.methods.enumerated() {
            #expect(method.constantIndex == index)
            #expect(method.constantToken.map { "\($0)" } == method.rawValue)
        }
        #expect(HTTPMethod(rawValue: "GET").constantIndex == nil)
        let metrics = HTTPMetrics(loops: 1)
        for method in [HTTPMethod.GET, HTTPMethod(rawValue: "GET"), .HEAD, HTTPMethod(rawValue: "PURGE")] {
            metrics.record(
                HTTPAccessRecord(
                    method: method, path: "/x", route: nil, routeIndex: -1, requestHeaders: HTTPHeaders(),
                    requestID: .none, remoteAddress: nil, connectionID: 1, loop: 0, status: 404, bodyBytes: 0,
                    duration: .nanoseconds(1)))
        }
        var buffer: [UInt8] = []
        metrics.emit(into: &buffer)
        let text = String(decoding: buffer, as: UTF8.self)
        #expect(text.contains("method=\"GET\",route=\"unmatched\",status=\"404\"} 2"), "\(text)")
        #expect(text.contains("method=\"HEAD\",route=\"unmatched\",status=\"404\"} 1"), "\(text)")
        #expect(text.contains("method=\"other\",route=\"unmatched\",status=\"404\"} 1"), "\(text)")
    }
}
