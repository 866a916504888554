// `make bench-sign`: what verifying a signed request costs (URLSignature.verify on a request
// target as the server sees it), per request, with one key and with three (rotation: every key is
// tried, so the time does not tell which one matched). Release build; prints one line per case.

import Crypto
import Foundation
import URLSigning

let keys = [
    URLSigningKey(
        "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881:520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
    )!,
    URLSigningKey("6f74686572:73616c74")!, URLSigningKey("746869726420:6b6579")!,
]
let now = Int(Date().timeIntervalSince1970)
let target = URLSignature(keys: [keys[0]]).sign(
    "/frames/3f2a9c1e5b7d4a608e1f2c3b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70/17?width=320&height=180&fit=cover&dpr=2&format=webp&quality=80",
    expires: now + 3600)

func measure(_ label: String, _ verifier: URLSignature, iterations: Int = 400_000) {
    var failures = 0
    var best = Double.infinity
    for _ in 0..<5 {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations where verifier.verify(target, now: now) != nil { failures += 1 }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations)
        best = min(best, elapsed)
    }
    precondition(failures == 0, "a valid target did not verify")
    print(
        String(
            format: "%@: %.0f ns per verification (best of 5 × %d; target %d bytes)", label, best, iterations, target.utf8.count))
}

measure("one key", URLSignature(keys: [keys[0]]))
measure("three keys", URLSignature(keys: [keys[2], keys[1], keys[0]]))

// For scale: swift-crypto's one-shot HMAC of the same bytes, its key set-up included (what
// verification would cost without the prepared per-key state).
do {
    let key = SymmetricKey(data: [UInt8](repeating: 7, count: 32))
    let message = Array(target.utf8)
    var sink: UInt8 = 0
    var best = Double.infinity
    for _ in 0..<5 {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<400_000 {
            sink ^= HMAC<SHA256>.authenticationCode(for: message, using: key).withUnsafeBytes { $0[0] }
        }
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 400_000)
    }
    print(String(format: "one-shot HMAC-SHA256 of the target: %.0f ns (for scale; %d)", best, Int(sink & 0)))
}
