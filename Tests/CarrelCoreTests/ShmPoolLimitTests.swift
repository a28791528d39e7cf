import CarrelCore
import Testing

@Suite("wl_shm pool limit")
struct ShmPoolLimitTests {
    @Test("pools up to the limit are admitted, the one over it is refused")
    func boundary() {
        let limit = ShmPoolLimit(maxPoolsPerClient: 3)
        #expect(limit.decide(poolsHeld: 1) == .admit)
        #expect(limit.decide(poolsHeld: 3) == .admit)
        guard case .refuse(let message) = limit.decide(poolsHeld: 4) else {
            Issue.record("the fourth pool was admitted")
            return
        }
        #expect(message.contains("at most 3"))
        #expect(message.contains("wl_shm_pool.destroy"))
    }

    @Test("the standard limit leaves room for many clients under the kernel's mapping cap")
    func standardIsFarBelowMapCount() {
        #expect(ShmPoolLimit.standard.maxPoolsPerClient >= 256)
        #expect(ShmPoolLimit.standard.maxPoolsPerClient * 32 < 65530)
        #expect(ShmPoolLimit.standard.decide(poolsHeld: ShmPoolLimit.standard.maxPoolsPerClient) == .admit)
    }

    @Test("a limit below one is raised to one: a client can always draw")
    func atLeastOne() {
        let limit = ShmPoolLimit(maxPoolsPerClient: 0)
        #expect(limit.maxPoolsPerClient == 1)
        #expect(limit.decide(poolsHeld: 1) == .admit)
        #expect(limit.decide(poolsHeld: 2) != .admit)
    }
}
