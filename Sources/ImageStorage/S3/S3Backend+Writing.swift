import AnimatedImage

/// Writing objects: an original in one PUT, or in parts above the multipart threshold, each
/// request with `Content-MD5`.
extension S3Backend {
    /// Uploads the original unless S3 has it already (a `HEAD` first): in one PUT, or in parts
    /// above the multipart threshold; each request carries `Content-MD5` and the SHA-256 of its
    /// body, which S3 checks.
    func ensureOriginal(_ sha256: String, file: String) throws(StorageFailure) {
        let key = layout.original(sha256)
        let head = try client.send("HeadObject", method: "HEAD", key: key)
        if head.status == 200 { return }
        guard head.status == 404 else { throw Self.refusal("HeadObject", key, head) }
        let bytes: ImageBytes
        do {
            bytes = try MappedFile(path: file).bytes
        } catch {
            throw .failed("\(error)")
        }
        if bytes.count <= multipartThreshold {
            try put(
                "PutObject", key: key, body: .mapped(bytes, offset: 0, length: bytes.count),
                payloadSHA256: sha256, contentType: "application/octet-stream")
        } else {
            try putInParts(key: key, bytes: bytes)
        }
    }

    /// PUT with `Content-MD5`; returns the ETag. Anything but 200 is a failure.
    @discardableResult
    func put(
        _ operation: String, key: String, query: [(String, String)] = [], body: S3Client.Body,
        payloadSHA256: String? = nil, contentType: String? = nil
    ) throws(StorageFailure) -> String {
        var headers = [("Content-MD5", S3Client.md5Base64(of: body))]
        if let contentType { headers.append(("Content-Type", contentType)) }
        let response = try client.send(
            operation, method: "PUT", key: key, query: query, headers: headers, body: body,
            payloadSHA256: payloadSHA256)
        guard response.status == 200 else { throw Self.refusal(operation, key, response) }
        return response.etag ?? ""
    }

    /// A multipart upload: the object appears only when the upload is completed; a failure
    /// aborts it, so no part lingers.
    func putInParts(key: String, bytes: ImageBytes) throws(StorageFailure) {
        let created = try client.send(
            "CreateMultipartUpload", method: "POST", key: key, query: [("uploads", "")],
            headers: [("Content-Type", "application/octet-stream")])
        guard created.status == 200, let uploadID = S3XML.value(of: "UploadId", in: created.body) else {
            throw Self.refusal("CreateMultipartUpload", key, created)
        }
        do throws(StorageFailure) {
            var etags: [String] = []
            var offset = 0
            while offset < bytes.count {
                let length = min(partBytes, bytes.count - offset)
                etags.append(
                    try put(
                        "UploadPart", key: key,
                        query: [("partNumber", String(etags.count + 1)), ("uploadId", uploadID)],
                        body: .mapped(bytes, offset: offset, length: length)))
                offset += length
            }
            let parts = etags.enumerated().map {
                "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(S3XML.escape($0.element))</ETag></Part>"
            }.joined()
            let document = Array("<CompleteMultipartUpload>\(parts)</CompleteMultipartUpload>".utf8)
            let completed = try client.send(
                "CompleteMultipartUpload", method: "POST", key: key,
                query: [("uploadId", uploadID)], headers: [("Content-Type", "application/xml")],
                body: .bytes(document))
            // S3 may answer 200 with an <Error> document when completing fails late.
            guard completed.status == 200, S3XML.errorCode(completed.body) == nil else {
                throw Self.refusal("CompleteMultipartUpload", key, completed)
            }
        } catch {
            _ = try? client.send("AbortMultipartUpload", method: "DELETE", key: key, query: [("uploadId", uploadID)])
            throw error
        }
    }
}
