"""A follow-up release for a fitted synthesizer: measure the marginals a question needs, refit from every release.

An answer whose variables no release measured together rests on the model's independences
(``pgmpy_dp.query_interval`` says so). [`measure_marginals`][pgmpy_dp.synthesis.followup.measure_marginals]
releases those marginals at a further budget (charged and ledgered like every release, by
``release_from_codes``), appends the release to ``releases_`` the moment its noise exists, and refits the
model from all releases with the one Markov fit (post-processing); a failure after the noise keeps the
release and the charge. PrivBayes's model becomes a Markov network, its families one clique each.
"""

from __future__ import annotations

import types
import warnings

from ..engine import ConvergenceWarning
from ..estimators.fitted import estimator_of
from ..privacy.loss import PureDP, ZCDP, privacy_loss
from ..privacy.random_state import check_random_state
from ..tables.release import release_from_codes
from .compression import expanded_from
from .marginals import fit_final_model


def _check_marginals(marginals, domain) -> list[tuple[str, ...]]:
    if isinstance(marginals, str) or (isinstance(marginals, tuple) and all(isinstance(a, str) for a in marginals)):
        marginals = [marginals]
    out, problems = [], []
    for m in marginals:
        m = (m,) if isinstance(m, str) else tuple(m)
        unknown = [a for a in m if a not in domain.attrs]
        if not m or unknown or len(set(m)) != len(m):
            problems.append(f"{m}: " + (f"unknown columns {unknown}" if unknown else "empty or repeats a column"))
        out.append(m)
    if problems:
        raise ValueError(f"marginals must be tuples of distinct columns of the fitted table ({list(domain.attrs)}); "
                         + "; ".join(problems))
    if not out:
        raise ValueError("marginals must name at least one marginal, e.g. [('diagnosis', 'mean radius')]")
    return out


def _composed(spent, new):
    """The loss of both: pure epsilons add; otherwise the rhos (a pure epsilon costs ``epsilon**2 / 2``)."""
    if isinstance(spent, PureDP) and isinstance(new, PureDP):
        return PureDP(spent.epsilon + new.epsilon)
    return ZCDP(spent.rho + new.rho)


def measure_marginals(synth, df, marginals, *, epsilon=None, rho=None, delta=None, budget=None, random_state=None):
    """Release ``marginals`` of ``df`` at a further loss and refit ``synth`` from all its releases; returns ``synth``.

    Parameters
    ----------
    synth : PrivateSynthesizer
        A fitted synthesizer (of the same table ``df``).
    df : pandas.DataFrame
        The private table it was fitted to.
    marginals : tuple of str or list of tuple of str
        The attribute sets to measure, e.g. ``query_interval``'s ``attrs["needs"]``.
    epsilon, rho, delta : float, optional
        The further loss (``epsilon`` alone: discrete Laplace; ``rho`` or ``epsilon`` with ``delta``:
        discrete Gaussian).
    budget : PrivacyBudget, optional
        Charged before any noise; the ledger labels the charge ``PrivateSynthesizer.measure``.
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible experiments only.

    Returns
    -------
    PrivateSynthesizer
        ``synth``, with the release appended to ``releases_``, ``loss_`` (``rho_``, ``epsilon_``) the
        composed loss and ``model_`` refitted.
    """
    if not hasattr(synth, "model_"):
        raise ValueError("the synthesizer is not fitted; call fit(df, domain=...) before a follow-up measurement")
    if getattr(synth, "schema_release_", None) is not None:
        raise NotImplementedError(
            "this synthesizer resolved its schema from the data (private bins or keys), which a follow-up "
            "release would have to recode the same way; declare the domain in full (the resolved one is "
            "synth.domain_) and fit again to measure more"
        )
    domain = synth.domain_
    marginals = _check_marginals(marginals, domain)
    loss = privacy_loss(epsilon, rho, delta, who="PrivateSynthesizer.measure",
                        example="synth.measure(df, [('a', 'b')], rho=0.01)")
    if budget is not None:
        budget.require(loss, who="PrivateSynthesizer.measure")
    codes = domain.encode(df, show_progress=False)
    expanded = expanded_from(synth.model_)
    fit_domain, compression = (domain, None) if expanded is None else (expanded[1].merged_domain, expanded[1])
    if compression is not None:  # MST fitted the merged states: the follow-up counts them too
        codes = compression.codes(codes)
    release = release_from_codes(codes, fit_domain, marginals, loss, budget=budget,
                                 random_state=check_random_state(random_state),
                                 label=f"PrivateSynthesizer.measure({marginals})")
    synth.releases_.append(release)  # kept, with the charge, whatever the refit does
    synth.loss_ = _composed(synth.loss_, loss)
    synth.rho_ = None if isinstance(synth.loss_, PureDP) else synth.loss_.rho
    synth.epsilon_ = synth.loss_.epsilon if isinstance(synth.loss_, PureDP) else None
    releases = list(synth.releases_)
    if compression is not None:
        releases[0] = compression.merge_release(releases[0])  # MST's 1-way release, as its fit read it
    start = None
    if not hasattr(synth.model_, "get_cpds"):  # a Markov model: start from its potentials
        est = estimator_of(synth.model_ if expanded is None else expanded[0])
        start = types.SimpleNamespace(cliques=list(est.cliques_), theta=list(est.log_potentials_))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = fit_final_model(releases, fit_domain, synth.show_progress, start=start).model_
    synth.model_ = model if compression is None else compression.expand(model)
    return synth
