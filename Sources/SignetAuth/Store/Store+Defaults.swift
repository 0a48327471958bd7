/// The store's calls that take `writes` for their transaction, in the forms for callers that
/// have none to add.
extension Store {
    public func rotateRefreshToken(hash: [UInt8], proof: String?, next: @Sendable (RefreshTokenRow) -> RefreshTokenRow, now: Int64) throws(StoreError) -> RefreshRotation {
        try rotateRefreshToken(hash: hash, proof: proof, retryWindow: 0, next: next, now: now, writes: [])
    }

    public func enrollDeviceKey(_ key: DeviceKeyRow, limit: Int) throws(StoreError) -> [String] {
        try enrollDeviceKey(key, limit: limit, writes: { _ in [] })
    }

    public func revokeCredential(id: [UInt8], userID: String, at: Int64, writes: [StoreWrite] = []) throws(StoreError) -> CredentialRevocation {
        try revokeCredential(id: id, userID: userID, at: at, writes: { _ in writes })
    }

    public func revokeDeviceKey(id: String, userID: String, at: Int64, writes: [StoreWrite] = []) throws(StoreError) -> Bool {
        try revokeDeviceKey(id: id, userID: userID, at: at, writes: { _ in writes })
    }

    public func adminRevokeCredential(id: [UInt8], userID: String, at: Int64, writes: [StoreWrite]) throws(StoreError) -> Bool {
        try adminRevokeCredential(id: id, userID: userID, at: at, writes: { _ in writes })
    }

    public func revokeRefreshFamily(hash: [UInt8], now: Int64) throws(StoreError) -> Bool {
        try revokeRefreshFamily(hash: hash, now: now, writes: [])
    }

    public func insertClient(_ client: ClientRow) throws(StoreError) {
        try insertClient(client, writes: [])
    }

    public func deleteClient(id: String, at: Int64) throws(StoreError) -> Int? {
        try deleteClient(id: id, at: at, writes: { _ in [] })
    }

    public func issueEmailCode(_ code: EmailCodeRow, interval: Int64, mail: OutboxRow?) throws(StoreError) -> Bool {
        try issueEmailCode(code, interval: interval, writes: mail.map { [.mail($0)] } ?? [])
    }

    public func createDeviceCode(_ row: DeviceCodeRow) throws(StoreError) {
        try createDeviceCode(row, writes: [])
    }

    public func rotateSigningKey(_ key: SigningKeyRow, unlessCreatedAfter: Int64) throws(StoreError) -> Bool {
        try rotateSigningKey(key, unlessCreatedAfter: unlessCreatedAfter, limit: KeyRing.heldLimit, writes: [])
    }

    public func deleteSigningKeys(retiredBefore: Int64) throws(StoreError) -> [String] {
        try deleteSigningKeys(retiredBefore: retiredBefore, writes: { _ in [] })
    }
}

extension Store {
    /// Every client kept in the database, oldest first.
    public func clientRows() throws(StoreError) -> [ClientRow] { try clientRows(offset: 0, limit: Int(Int32.max)) }
}
