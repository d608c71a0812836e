"""``review start`` on the emulator without ``--seed`` (issue 41 item 10): the emulator data file missing, the
emulator would be made from its built-in demo company, and the campaign written into the manifests would review a
company that is not the user's. It is refused, before any call, naming what to give."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reconciler import emulator
from tests.review.conftest import Company

DEMO_SEED = Path(emulator.__file__).parent / "demo_seed.yaml"


def test_review_start_on_a_new_emulator_without_seed_is_refused_and_writes_nothing(
        make_company: Callable[..., Company]) -> None:
    company = make_company()
    data = company.root / "emulator.yaml"
    code, out, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                                 "--emulator", str(data), service=False)
    assert (code, out) == (1, "")
    assert err == (f"Error: review start q4: the emulator data file {data} does not exist and no --seed was given, so "
                   "the campaign would review the emulator's built-in demo company, not yours. Give --seed with the "
                   f"seed of the company to rehearse on (here, --seed {company.root / 'seed.yaml'}), or --emulator a "
                   f"data file that exists (to review the demo company on purpose: --seed {DEMO_SEED}). Nothing was "
                   "written.\n")
    assert not (company.root / "reviews").exists() and not data.exists()


def test_the_demo_company_can_be_reviewed_on_purpose_with_its_seed(make_company: Callable[..., Company]) -> None:
    company = make_company()
    code, out, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                                 "--fallback", "sec@acme.com", "--emulator", str(company.root / "emulator.yaml"),
                                 "--seed", str(DEMO_SEED), service=False)
    assert code == 0, err
    assert out.startswith(f"Started review q4 in {company.root / 'reviews' / 'q4'}: ")


def test_an_existing_emulator_data_file_needs_no_seed(make_company: Callable[..., Company]) -> None:
    company = make_company()
    assert company.run("plan", str(company.root))[0] == 0  # creates emulator.yaml from the company's seed
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    assert "demo company" not in err
