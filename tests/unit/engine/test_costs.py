"""How many tokens to draft, from measured batch costs and a drafter's record."""

from __future__ import annotations

from lsp_coder.engine.costs import BatchCosts, DrafterRecord, draft_can_pay

CPU = BatchCosts({1: 36.0, 2: 60.0, 4: 104.0, 8: 235.0, 16: 285.0})
GPU = BatchCosts({1: 10.0, 2: 10.5, 4: 11.0, 8: 12.0, 16: 14.0})


def test_costs_interpolate_and_extrapolate():
    assert CPU.ms(3) == 82.0
    assert CPU.ms(12) == 260.0
    assert CPU.ms(20) > CPU.ms(16)


def test_a_table_measured_beside_a_busy_cpu_is_not_plausible():
    # The embedded 1.5B on a 2-core EPYC, quiet and beside two busy processes.
    quiet = BatchCosts({1: 37.5, 2: 57.5, 3: 82.2, 4: 94.1, 6: 133.6, 8: 221.9, 12: 267.4,
                        16: 242.6})
    busy = BatchCosts({1: 2314.7, 2: 127.7, 3: 192.3, 4: 389.4, 6: 387.8, 8: 866.0,
                       12: 902.2, 16: 927.5})
    tiny = BatchCosts({1: 1.7, 2: 3.0, 3: 2.6, 4: 3.0, 6: 4.6, 8: 5.0, 12: 5.8, 16: 7.6})
    assert quiet.plausible() and CPU.plausible() and GPU.plausible() and tiny.plausible()
    assert not busy.plausible()


def test_a_drafter_that_is_nearly_always_right_drafts_long_on_a_cpu():
    record = DrafterRecord(max_k=16, prior_accepted=9, prior_rejected=1)
    for _ in range(20):
        record.record(12, 12, 0.0, 250.0)
    assert record.choose_k(CPU, 16) >= 12


def test_a_guessing_drafter_is_not_used_on_a_cpu_but_is_on_a_gpu():
    cpu, gpu = (DrafterRecord(max_k=8) for _ in range(2))
    for record, step_ms in ((cpu, CPU.ms(5)), (gpu, GPU.ms(5))):
        for _ in range(20):
            record.record(4, 1, 0.0, step_ms)
    assert cpu.choose_k(CPU, 8) == 0
    assert gpu.choose_k(GPU, 8) >= 1


def test_draft_time_counts_against_a_draft_model():
    cheap, slow = DrafterRecord(max_k=8), DrafterRecord(max_k=8)
    for _ in range(20):
        cheap.record(4, 3, 0.0, GPU.ms(5))
        slow.record(4, 3, 4 * 40.0, 172.0)  # drafting costs more than the target's decode
    assert slow.choose_k(GPU, 8) == 0
    assert cheap.choose_k(GPU, 8) > 0


def test_an_unpaying_drafter_is_probed_now_and_then():
    record = DrafterRecord(max_k=8)
    for _ in range(20):
        record.record(4, 0, 0.0, 100.0)
    ks = [record.choose_k(CPU, 8) for _ in range(DrafterRecord.PROBE_EVERY)]
    assert ks.count(2) == 1 and ks.count(0) == DrafterRecord.PROBE_EVERY - 1


def test_the_estimate_follows_recent_behaviour():
    record = DrafterRecord(max_k=8)
    for _ in range(50):
        record.record(4, 0, 0.0, 100.0)
    low = record.acceptance
    for _ in range(50):
        record.record(4, 4, 0.0, 100.0)
    assert low < 0.1 and record.acceptance > 0.9


def test_a_drafter_the_clock_says_does_not_pay_is_stopped():
    record = DrafterRecord(max_k=8)
    for _ in range(20):
        record.record(4, 4, 0.0, 400.0)  # all accepted, but each step took 400 ms
    assert record.acceptance > 0.9
    assert record.choose_k(CPU, 8) == 0


def test_real_decodes_scale_the_whole_table():
    costs = BatchCosts({1: 36.0, 2: 60.0, 4: 104.0})
    for _ in range(200):  # a long context: single tokens take 45 ms, batches are never seen
        costs.observe(1, 45.0)
    assert abs(costs.ms(1) - 45.0) < 0.5
    # The batches slow down alike, so a 2-token draft is no cheaper than it was relative to one.
    assert abs(costs.ms(2) / costs.ms(1) - 60.0 / 36.0) < 1e-9
    assert costs.as_dict()[4] == round(104.0 * costs.scale, 1)


def test_a_draft_model_is_worth_loading_on_a_gpu_not_on_a_cpu():
    # A draft model a third of the target's size, at a third of its token time.
    assert draft_can_pay(GPU, GPU.ms(1) / 3, 8)
    assert not draft_can_pay(CPU, CPU.ms(1) / 3, 8)
    assert not draft_can_pay(GPU, GPU.ms(1) * 2, 8)  # a draft slower than the target
    assert draft_can_pay(CPU, 0.0, 8, acceptance=0.99)  # free and nearly always right
