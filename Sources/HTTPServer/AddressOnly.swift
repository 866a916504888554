/// A stored property that makes the struct holding it address-only, and nothing else: it holds
/// no value, ever.
///
/// Swift lowers a large struct of references (an ``HTTPRequest``, an ``HTTPAccessRecord``) as
/// a value and moves it to memory late, when it is passed on (`LoadableByAddress`); there it
/// copied the request built for a handler into the slot it passed and destroyed the first — a
/// retain and a release of each of its references where the code only moves it. An
/// address-only struct is built where it is used and handed on by address from the start. The
/// cost is an empty existential: 40 bytes and a check of its tag when the struct is destroyed.
struct AddressOnly: Sendable {
    private let never: (any Sendable)? = nil
}
