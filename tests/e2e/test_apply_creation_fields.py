"""The fields a creation from a template sends, as the manifest gives them:
the actual end date, and the deal of the account's second CRM (an
opportunity) for a template that needs a deal.

The examples/onboarding company on the in-process emulator, its account
linked to a second-CRM account with one opportunity.
"""

from __future__ import annotations

from pathlib import Path

from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from tests.e2e.conftest import EmulatorRig, onboarding_rig

RENEWAL = "group.customer-inc.workspace.renewal"


def test_a_creation_sends_its_actual_end_date_and_its_second_crm_opportunity(
        tmp_path: Path, clock: VirtualClock) -> None:
    root = onboarding_rig(tmp_path, clock).root
    seed = root / "seed.yaml"
    seed.write_text(seed.read_text(encoding="utf-8").replace("crmTwoAccountId: null}", "crmTwoAccountId: sf-1}").replace(
        "    deals:\n", "    deals:\n      - {crmTwoOpportunityId: opp-7, crmTwoAccountId: sf-1, name: Renewal 2027 (second "
        "CRM), amount: 9000}\n"), encoding="utf-8")
    groups = root / "groups.yaml"
    groups.write_text(groups.read_text(encoding="utf-8").replace(
        'deal: {crmOneDealId: "9811"}', "actualEndDate: 2027-03-15\n        deal: {crmTwoOpportunityId: opp-7}"),
        encoding="utf-8")
    rig = EmulatorRig(Emulator.from_seed_file(seed, clock=clock), clock, root)

    rig.apply(rig.plan(targets=[RENEWAL]))
    (renewal,) = [w for w in rig.company.workspaces if w.name == "Customer Inc – Renewal 2027"]
    assert (renewal.target_end_date, renewal.actual_end_date) == ("2027-03-31", "2027-03-15")
    deal = rig.company.deal(renewal.deal_id)
    assert (deal.crm_two_opportunity_id, deal.crm_one_deal_id) == ("opp-7", None)
