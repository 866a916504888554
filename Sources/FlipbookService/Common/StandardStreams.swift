import Glibc

/// Whole writes to standard output and standard error (log lines, the CLI's messages): every byte
/// written, retrying after a signal or a partial write. When the stream fails (closed, a full
/// disk) the rest is dropped: there is nowhere left to report it.
public enum StandardStreams {
    public static func write(_ text: String, to descriptor: Int32) {
        write(Array(text.utf8), to: descriptor)
    }

    public static func write(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
