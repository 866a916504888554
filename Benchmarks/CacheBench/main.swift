// `make bench-cache-scale`: what a cold frame costs the frame cache as it holds more images
// (issue 37). In process, no HTTP: distinct 8×8 two-frame GIFs, frame 0 of each asked for one
// request at a time (each a miss that waits for its decode). The cache is filled to 100, 1,000,
// 10,000, … images and `--block` more cold requests are timed at each; then the clock is moved
// past the cache's active time (every image idle, as after a quiet spell) and a last block is
// timed. Prints one JSON line per block and, at the end, each block's p50 over the first's: the
// ratio issue 37's goal reads (≤ 1.5 with 100,000 images cached against 100).
//
//   cache-bench [--images N] [--block B] [--budget BYTES] [--threads T]

import AnimatedImage
import Foundation
import FrameCache
import Synchronization
import SystemResources

/// The system's monotonic clock moved on by hand: images go idle without waiting for it.
final class ShiftedClock: MonotonicClock {
    private let shift = Atomic<Int64>(0)
    private let base = SystemMonotonicClock()
    func nanoseconds() -> Int64 { base.nanoseconds() + shift.load(ordering: .relaxed) }
    func advance(by seconds: Double) { shift.wrappingAdd(Int64(seconds * 1e9), ordering: .relaxed) }
}

/// An 8×8 GIF of two frames, its palette and pixels from `seed` (so each one is different).
func tinyGIF(seed: Int) -> [UInt8] {
    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    var out = Array("GIF89a".utf8) + le16(8) + le16(8) + [0xF7, 0, 0]
    var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    for _ in 0..<768 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        out.append(UInt8(truncatingIfNeeded: state))
    }
    out += [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [0x03, 0x01, 0x00, 0x00, 0x00]
    for frame in 0..<2 {
        out += [0x21, 0xF9, 0x04, 0x04] + le16(10) + [0x00, 0x00]
        out += [0x2C] + le16(0) + le16(0) + le16(8) + le16(8) + [0x00, 0x08]
        // Every pixel its own 9-bit code after a clear code, then the end code: no dictionary.
        var codes = [256]
        for i in 0..<64 { codes.append((i + frame * 7 + seed) & 0xFF) }
        codes.append(257)
        var bytes: [UInt8] = []
        var acc = 0
        var bits = 0
        for code in codes {
            acc |= code << bits
            bits += 9
            while bits >= 8 {
                bytes.append(UInt8(acc & 0xFF))
                acc >>= 8
                bits -= 8
            }
        }
        if bits > 0 { bytes.append(UInt8(acc & 0xFF)) }
        out.append(UInt8(bytes.count))
        out += bytes
        out.append(0)
    }
    out.append(0x3B)
    return out
}

var images = 100_000
var block = 1_000
var budget = FrameCacheConfiguration().budgetBytes
var threads = 2
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let flag = arguments.next() {
    guard let value = arguments.next().flatMap(Int.init) else { fatalError("\(flag) needs a number") }
    switch flag {
    case "--images": images = value
    case "--block": block = value
    case "--budget": budget = value
    case "--threads": threads = value
    default: fatalError("unknown option \(flag)")
    }
}

let clock = ShiftedClock()
let cache = FrameCache(
    configuration: FrameCacheConfiguration(budgetBytes: budget, decodeThreads: threads), clock: clock)
let decoded = (0..<images + 7 * block).map { seed in
    // Parsed once up front, so what is timed is the cache's work.
    try! AnimatedImage(bytes: tinyGIF(seed: seed))
}

/// Asks for frame 0 of image `n` and waits for it; returns the seconds it took.
func coldRequest(_ n: Int) -> Double {
    let image = CacheableImage(id: "tiny-\(n)", image: decoded[n])
    let done = DispatchSemaphore(value: 0)
    let started = DispatchTime.now().uptimeNanoseconds
    let completion: FrameCache.Completion = { result in
        if case .failure(let error) = result { fatalError("frame 0 of \(n): \(error)") }
        done.signal()
    }
    guard cache.frame(image, index: 0, completion: completion) == nil else {
        fatalError("image \(n) was cached before it was asked for")
    }
    done.wait()
    return Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
}

func quantile(_ sorted: [Double], _ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }

/// Cold requests for the next `count` images; prints and returns their p50 in seconds.
func measure(_ range: Range<Int>, label: String) -> Double {
    let before = cache.stats()
    let times = range.map(coldRequest).sorted()
    let line: [String: Any] = [
        "phase": label, "cachedBefore": before.entries, "requests": times.count,
        "p50_us": quantile(times, 0.5) * 1e6, "p90_us": quantile(times, 0.9) * 1e6,
        "p99_us": quantile(times, 0.99) * 1e6, "mean_us": times.reduce(0, +) / Double(times.count) * 1e6,
        "usedBytes": before.usedBytes,
    ]
    let json = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
    print(String(decoding: json, as: UTF8.self))
    return quantile(times, 0.5)
}

// Fills the cache to each checkpoint (frame 0 of new images, one request at a time), then times
// `block` more cold requests there; at the end, once every image has gone idle, a last block.
var checkpoints = [100, 1_000, 10_000, 100_000, 1_000_000].filter { $0 < images } + [images]
var next = 0
var results: [(Int, Double)] = []
for checkpoint in checkpoints {
    let started = DispatchTime.now().uptimeNanoseconds
    while next < checkpoint {
        _ = coldRequest(next)
        next += 1
    }
    let fill = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    print("{\"filledTo\": \(checkpoint), \"fillSeconds\": \(String(format: "%.2f", fill))}")
    results.append((checkpoint, measure(next..<next + block, label: "at \(checkpoint)")))
    next += block
}
// Every image idle: the active time passed (as after a quiet spell), then more cold requests.
clock.advance(by: 31)
let idle = measure(next..<next + block, label: "all idle")
cache.shutdown()
let base = results[0].1
for (checkpoint, p50) in results {
    print(String(format: "{\"images\": %d, \"p50_us\": %.1f, \"ratio\": %.2f}", checkpoint, p50 * 1e6, p50 / base))
}
print(String(format: "{\"allIdle_p50_us\": %.1f, \"ratio\": %.2f}", idle * 1e6, idle / base))
