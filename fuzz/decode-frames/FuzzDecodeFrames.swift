// libFuzzer entry for decoding every frame of a file through giflib, libpng and libwebp and the
// Compositor (linked with AnimatedImage by fuzz/run.sh), under FuzzLimits.decoding. The last input
// byte steers the checkpoint interval, the random order and whether frames are decoded ahead on
// threads. The run traps when:
//   - anything crashes, or an error other than the documented ones comes out;
//   - in order, a frame fails under another frame's index, or a canvas has the wrong size;
//   - full verification keeps other frames than those that decode in order;
//   - asked for at random (a fresh renderer, decoding ahead or not), a frame differs from the
//     in-order render, or a frame after the first broken one renders;
//   - after the in-order pass, some frame would cost more than `checkpointInterval` decodes;
//   - resuming from a frame's own PNG gives another next frame than replaying.

@testable import AnimatedImage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let bytes = imageBytes(data, size)
    let limits = FuzzLimits.decoding
    let image: AnimatedImage
    do {
        image = try AnimatedImage(bytes: bytes, limits: limits, verification: .structural)
    } catch {
        checkIndexingError(error)
        return 0
    }
    let steer = Int(data[size - 1])
    let interval = 1 + steer % 5
    let resumeFrame = steer % image.frameCount

    // In order, until the first frame that does not decode.
    let inOrder = FrameRenderer(image: image, checkpointInterval: interval)
    var prints: [Int] = []
    var resumeCanvas: Canvas?
    for i in 0..<image.frameCount {
        do {
            let canvas = try inOrder.render(i)
            check(
                canvas.width == image.canvasWidth && canvas.height == image.canvasHeight,
                "frame \(i) is \(canvas.width)×\(canvas.height)")
            prints.append(fingerprint(canvas))
            if i == resumeFrame { resumeCanvas = canvas }
        } catch AnimatedImageError.frameDecodeFailed(let index, _) {
            check(index == i, "rendering frame \(i) in order failed in frame \(index)")
            break
        } catch {
            fatalError("fuzz invariant: rendering frame \(i) threw \(error)")
        }
    }
    let decoded = prints.count
    for k in 0..<decoded {
        check(
            inOrder.framesToDecode(for: k) <= interval,
            "frame \(k) costs \(inOrder.framesToDecode(for: k)) decodes after playing (interval \(interval))")
    }

    // Full verification keeps exactly the frames that decode in order.
    do {
        let verified = try AnimatedImage(bytes: bytes, limits: limits, verification: .full)
        check(verified.frameCount == decoded, "verification keeps \(verified.frameCount) frames, \(decoded) decode")
        check(
            verified.index.truncated == (image.index.truncated || decoded < image.frameCount),
            "verification says truncated: \(verified.index.truncated)")
    } catch AnimatedImageError.noCompleteFrame {
        check(decoded == 0, "verification found no complete frame, \(decoded) decode in order")
    } catch {
        fatalError("fuzz invariant: verification threw \(error)")
    }
    guard decoded > 0 else { return 0 }

    // At random, from a fresh renderer: the same canvases.
    let atRandom = FrameRenderer(image: image, checkpointInterval: 2)
    atRandom.backgroundDecoding = steer & 0x80 != 0
    for j in 0..<min(8, size) {
        let k = Int(data[(j * 7919) % size]) % decoded
        do {
            check(fingerprint(try atRandom.render(k)) == prints[k], "frame \(k) at random differs from in order")
        } catch {
            fatalError("fuzz invariant: frame \(k) decoded in order but not at random: \(error)")
        }
    }
    if decoded < image.frameCount {
        do {
            _ = try atRandom.render(decoded)
            fatalError("fuzz invariant: frame \(decoded) rendered at random but not in order")
        } catch AnimatedImageError.frameDecodeFailed(let index, _) {
            check(index == decoded, "frame \(decoded) failed as frame \(index)")
        } catch {
            fatalError("fuzz invariant: frame \(decoded) threw \(error)")
        }
    }

    // Resumed from frame k's PNG, frame k + 1 is what replaying gives.
    if let canvas = resumeCanvas, resumeFrame + 1 < decoded, inOrder.canResume(after: resumeFrame) {
        do {
            let png = try PNGEncoder(compressionLevel: steer % 10).encode(canvas)
            let resumed = FrameRenderer(image: image)
            try resumed.resume(after: resumeFrame, png: png)
            check(
                fingerprint(try resumed.render(resumeFrame + 1)) == prints[resumeFrame + 1],
                "frame \(resumeFrame + 1) resumed from frame \(resumeFrame)'s PNG differs")
        } catch {
            fatalError("fuzz invariant: resuming after frame \(resumeFrame) threw \(error)")
        }
    }
    return 0
}
