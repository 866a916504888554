import CSQLite

/// One connection to an SQLite database file, with the few calls the listing index makes:
/// statements run with text, integer or null parameters, rows read as text or integers. Not
/// thread-safe: its owner locks. Closed when released.
final class SQLiteDatabase {
    /// An SQLite result code other than OK, ROW or DONE, with its message.
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var message: String

        /// The file is not a database, or its content is damaged.
        var isDamage: Bool {
            let primary = code & 0xFF
            return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_FORMAT
        }

        var description: String { "SQLite error \(code): \(message)" }
    }

    /// A parameter's value.
    enum Value: Sendable, Equatable {
        case text(String)
        case integer(Int)
        case null
    }

    let path: String
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (with `create`, creating) the database at `path`; waits up to `busySeconds` for
    /// another connection's lock before a statement fails.
    init(path: String, create: Bool, busySeconds: Double = 30) throws(Failure) {
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0)
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(handle)
            throw Failure(code: code, message: "\(path): \(message)")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Int32(busySeconds * 1000))
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs `sql` (one or more statements, no parameters, no rows wanted).
    func execute(_ sql: String) throws(Failure) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            throw Failure(code: code, message: message.map { String(cString: $0) } ?? error)
        }
    }

    /// Runs `sql` with `texts` bound to its parameters in order; calls `row` for each row
    /// (reading its columns through the ``Row`` it is given). The statement is prepared once per
    /// connection and kept.
    func run(_ sql: String, _ texts: [String] = [], integers: [Int] = [], row: (Row) -> Void = { _ in })
        throws(Failure)
    {
        try run(sql, values: texts.map(Value.text) + integers.map(Value.integer), row: row)
    }

    /// Runs `sql` with `values` bound to its parameters in order, as ``run(_:_:integers:row:)``.
    func run(_ sql: String, values: [Value], row: (Row) -> Void = { _ in }) throws(Failure) {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .text(let text): try check(sqlite3_bind_text(statement, index, text, -1, Self.transient))
            case .integer(let integer): try check(sqlite3_bind_int64(statement, index, Int64(integer)))
            case .null: try check(sqlite3_bind_null(statement, index))
            }
        }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw Failure(code: code, message: error) }
            row(Row(statement: statement))
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// A row being read: its columns by index.
    struct Row {
        fileprivate let statement: OpaquePointer

        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(statement, column) else { return "" }
            let count = Int(sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }

        func integer(_ column: Int32) -> Int {
            Int(sqlite3_column_int64(statement, column))
        }

        func isNull(_ column: Int32) -> Bool {
            sqlite3_column_type(statement, column) == SQLITE_NULL
        }
    }

    private func prepared(_ sql: String) throws(Failure) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw Failure(code: code, message: error) }
        statements[sql] = statement
        return statement
    }

    private func check(_ code: Int32) throws(Failure) {
        guard code == SQLITE_OK else { throw Failure(code: code, message: error) }
    }

    private var error: String { String(cString: sqlite3_errmsg(handle)) }

    /// SQLite copies bound text at once (`SQLITE_TRANSIENT`, a macro Swift cannot import).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
