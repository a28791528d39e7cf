/// Where the coordinator records which providers may hold (a file in the
/// compositor, an array in tests).
public protocol ProviderStateStore: AnyObject {
    /// Replaces the record with `state`, durably, before returning.
    func record(_ state: ProviderState) throws(ProviderError)
    /// Removes the record: nothing holds.
    func clear() throws(ProviderError)
}

/// The outcome of applying the providers the policy enables.
public enum ProviderApplyResult: Sendable, Equatable {
    case applied
    /// `provider` failed with `message`; every provider applied before it was
    /// reverted, in reverse order (`rolledBack`); `rollbackFailures` are the
    /// reverts that themselves failed (they stay in the state file).
    case failed(provider: String, message: String, rolledBack: [String], rollbackFailures: [String])

    /// What the client hears in `failed(restriction_failed)`.
    public var clientMessage: String? {
        guard case .failed(let provider, let message, _, _) = self else { return nil }
        return "restriction provider \(provider) could not be applied: \(message)"
    }
}

/// A verify that failed: which provider, and why.
public struct ProviderVerifyFailure: Sendable, Equatable {
    public var provider: String
    public var message: String
    /// What the client hears in `interrupted(integrity)`.
    public var clientMessage: String { "restriction provider \(provider) stopped holding: \(message)" }

    public init(provider: String, message: String) {
        self.provider = provider
        self.message = message
    }
}

/// The decisions about providers: apply all in order or none (rolling back
/// in reverse order), record before applying, verify while they hold, revert
/// in reverse order, and keep what could not be reverted on record.
///
/// Runs on the compositor's one thread; the providers bound their own time.
public final class ProviderCoordinator {
    /// In the order they are applied.
    public let providers: [RestrictionProvider]
    private let store: ProviderStateStore
    /// The providers that hold now, in the order they were applied.
    public private(set) var applied: [RestrictionProvider] = []
    /// Set when a verify failed: the session is interrupted and the
    /// restrictions stay, but there is nothing more to report until the next apply.
    public private(set) var verificationHalted = false
    /// Providers whose revert failed, or is still under way
    /// (`revertInFlight`); kept on record for the next start.
    private var unreverted: [RestrictionProvider] = []
    /// `recordAhead` put every provider on record for an apply not yet run.
    private var aheadOnRecord = false

    public init(providers: [RestrictionProvider], store: ProviderStateStore) {
        self.providers = providers
        self.store = store
    }

    public var isEmpty: Bool { providers.isEmpty }
    public var appliedNames: [String] { applied.map(\.name) }

    /// Whether the compositor should (keep) verifying on a timer.
    public var needsVerification: Bool { !applied.isEmpty && !verificationHalted }

    /// Applies every provider, in order; the first failure reverts the ones
    /// already applied, in reverse order. Applying again while they hold (an
    /// update of the configuration) updates each instead, in order; the first
    /// that cannot reports the failure and nothing is reverted, since what
    /// held before still holds (only the network provider changes on update).
    public func apply(_ set: RestrictionSet) -> ProviderApplyResult {
        if providers.isEmpty { return .applied }
        aheadOnRecord = false
        if !applied.isEmpty {
            for provider in applied {
                do {
                    try provider.update(set)
                } catch {
                    return .failed(provider: provider.name, message: error.message, rolledBack: [], rollbackFailures: [])
                }
            }
            return .applied
        }
        verificationHalted = false
        for provider in providers {
            let holding = applied + [provider]
            let entries = (unreverted.filter { u in !holding.contains { $0 === u } } + holding).map {
                ProviderState.Entry(name: $0.name, token: $0.recoveryToken)
            }
            do {
                try store.record(ProviderState(entries: entries))
            } catch {
                return rollBack(failed: provider.name, message: "could not record its state before applying (\(error.message))")
            }
            do {
                try provider.apply(set)
            } catch {
                // It may have put part of itself up before failing.
                try? provider.revert()
                return rollBack(failed: provider.name, message: error.message)
            }
            applied.append(provider)
        }
        return .applied
    }

    /// Records, before the compositor starts what `apply` will find done
    /// (a provider that puts itself up ahead: the nft load runs while the
    /// loop goes on), every provider that could then hold, so that a crash
    /// meanwhile is recovered from. `apply` records again as it goes; a
    /// provider on record but not up is reverted for nothing, never missed.
    public func recordAhead() throws(ProviderError) {
        guard !providers.isEmpty, applied.isEmpty else { return }
        let entries = (unreverted + providers.filter { p in !unreverted.contains { $0 === p } }).map {
            ProviderState.Entry(name: $0.name, token: $0.recoveryToken)
        }
        try store.record(ProviderState(entries: entries))
        aheadOnRecord = true
    }

    private func rollBack(failed provider: String, message: String) -> ProviderApplyResult {
        let names = applied.reversed().map(\.name)
        let failures = revertAll()
        return .failed(provider: provider, message: message, rolledBack: names, rollbackFailures: failures)
    }

    /// Verifies the providers that hold, in order; the first failure is
    /// reported and verification stops until the next apply.
    public func verify() -> ProviderVerifyFailure? {
        guard needsVerification else { return nil }
        for provider in applied {
            do {
                try provider.verify()
            } catch {
                verificationHalted = true
                return ProviderVerifyFailure(provider: provider.name, message: error.message)
            }
        }
        return nil
    }

    /// Reverts every provider that holds, in reverse order. Returns one
    /// message per provider that failed to revert; those stay on record so
    /// the next start tries again. Safe to call when nothing holds.
    @discardableResult
    public func revertAll() -> [String] {
        var failures: [String] = []
        for provider in applied.reversed() {
            do {
                try provider.revert()
                if provider.revertInFlight {
                    // Not down until it settles: stays on record.
                    if !unreverted.contains(where: { $0 === provider }) { unreverted.append(provider) }
                } else {
                    unreverted.removeAll { $0 === provider }
                }
            } catch {
                failures.append("restriction provider \(provider.name) could not be reverted: \(error.message)")
                if !unreverted.contains(where: { $0 === provider }) { unreverted.append(provider) }
            }
        }
        let wasApplied = !applied.isEmpty
        applied.removeAll()
        verificationHalted = false
        if unreverted.isEmpty {
            do { try store.clear() } catch { failures.append("could not remove the provider state record: \(error.message)") }
        } else if wasApplied {
            let entries = unreverted.map { ProviderState.Entry(name: $0.name, token: $0.recoveryToken) }
            do { try store.record(ProviderState(entries: entries)) } catch {
                failures.append("could not record the providers left applied: \(error.message)")
            }
        }
        return failures
    }

    /// A revert the provider started without waiting (the table's delete)
    /// is over: done (`failure` nil), it leaves the record; failed, it stays
    /// on record for the next start, like a revert that failed at once.
    /// Returns the messages to log (the failure, and any failure to record).
    public func revertSettled(_ provider: RestrictionProvider, failure: String?) -> [String] {
        var messages: [String] = []
        if let failure {
            messages.append("restriction provider \(provider.name) could not be reverted: \(failure)")
            if !unreverted.contains(where: { $0 === provider }) { unreverted.append(provider) }
        } else {
            unreverted.removeAll { $0 === provider }
        }
        // What may hold now: the unreverted, and what is applied (or, with
        // an apply started ahead, every provider).
        let holding = aheadOnRecord ? providers : applied
        let entries = (unreverted.filter { u in !holding.contains { $0 === u } } + holding).map {
            ProviderState.Entry(name: $0.name, token: $0.recoveryToken)
        }
        do {
            if entries.isEmpty { try store.clear() } else { try store.record(ProviderState(entries: entries)) }
        } catch {
            messages.append("could not record the providers left applied: \(error.message)")
        }
        return messages
    }
}
