import FlipbookTestSupport
import ServiceTestSupport
import Testing

/// The S3 tests' moto server is taken as started only when moto itself answers: a free port
/// picked for it can be bound by one of the test process's own servers before moto starts, and
/// such a server (answering 404) was once taken for moto, failing the S3 suites by chance. (That
/// moto answers is what every S3 test starts from; asking it here would reset its buckets under
/// the suites running beside this one.)
@Suite("moto readiness")
struct MotoReadinessTests {
    @Test func anotherServerOnThePortIsNotTakenForMoto() async throws {
        let service = try TestService()
        #expect(try service.client.get("/moto-api/reset").status == 404)
        #expect(!MotoServer.answers(on: service.client.port))
        await service.stop()
    }
}
