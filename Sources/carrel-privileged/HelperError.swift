/// A sentence for the log (and the exit status when it stops the helper).
struct HelperError: Error {
    let message: String
    let status: Int32
    init(_ message: String, status: Int32 = 2) {
        self.message = message
        self.status = status
    }
}
