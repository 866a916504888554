/// The checks of ``DecodeLimits`` made while indexing, each naming the limit it enforces.
enum Limits {
    static func checkFileSize(_ size: Int, limits: DecodeLimits) throws {
        if size > limits.maxFileBytes {
            throw AnimatedImageError.limitExceeded(.maxFileBytes, value: size, limit: limits.maxFileBytes)
        }
    }

    static func checkCanvas(width: Int, height: Int, limits: DecodeLimits) throws {
        let side = max(width, height)
        if side > limits.maxDimension {
            throw AnimatedImageError.limitExceeded(.maxDimension, value: side, limit: limits.maxDimension)
        }
        let pixels = width * height
        if pixels > limits.maxFramePixels {
            throw AnimatedImageError.limitExceeded(.maxFramePixels, value: pixels, limit: limits.maxFramePixels)
        }
    }

    static func checkFrame(_ rect: PixelRect, limits: DecodeLimits) throws {
        let pixels = rect.width * rect.height
        if pixels > limits.maxFramePixels {
            throw AnimatedImageError.limitExceeded(.maxFramePixels, value: pixels, limit: limits.maxFramePixels)
        }
    }

    static func checkFrameCount(_ count: Int, canvasPixels: Int, limits: DecodeLimits) throws {
        if count > limits.maxFrames {
            throw AnimatedImageError.limitExceeded(.maxFrames, value: count, limit: limits.maxFrames)
        }
        let total = count * canvasPixels
        if total > limits.maxTotalPixels {
            throw AnimatedImageError.limitExceeded(.maxTotalPixels, value: total, limit: limits.maxTotalPixels)
        }
    }

    static func checkDecodeMemory(_ bytes: Int, limits: DecodeLimits) throws {
        if bytes > limits.maxDecodeBytes {
            throw AnimatedImageError.limitExceeded(.maxDecodeBytes, value: bytes, limit: limits.maxDecodeBytes)
        }
    }
}
