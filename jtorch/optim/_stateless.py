"""``optim.swap_in_optimizer_params_and_state``: run an optimizer's step on other parameter
tensors and state (a functional step over a checkpoint's copy, say) and restore it after."""

from __future__ import annotations

import contextlib
from collections import defaultdict

__all__ = ["swap_in_optimizer_params_and_state"]


def _prepare(optimizer, swapin_parameters: dict, swapin_optim_state) -> tuple:
    """(state keyed by packed ids, [(live group, swap-in group, its parameters)]), checked
    against the live optimizer as torch checks them."""
    if not optimizer.state:
        raise RuntimeError("swap_in_optimizer_params_and_state requires initialized optimizer "
                           "state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(  # noqa: TRY004  (torch's type)"swap_in_optimizer_params_and_state requires a DCP-style optimizer "
                           "state_dict.")
    state = swapin_optim_state.get("state")
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(state, dict):
        raise RuntimeError("swap_in_optimizer_params_and_state requires "  # noqa: TRY004
                           "swapin_optim_state['state'] to be a dict.")
    if not isinstance(groups, list) or len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swap_in_optimizer_params_and_state requires "
                           "swapin_optim_state['param_groups'] to match "
                           "optimizer.param_groups.")
    flat = list(swapin_parameters.values())
    offset, seen, infos = 0, set(), []
    for live, swap in zip(optimizer.param_groups, groups):
        ids = list(swap.get("params", ()))
        if len(ids) != len(live["params"]):
            raise RuntimeError("swap_in_optimizer_params_and_state requires each param group "
                               "to hold as many parameters as the live one.")
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError("swap_in_optimizer_params_and_state requires the explicit "
                               "parameter state to match optimizer.param_groups ordering.")
        infos.append((live, swap, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"swap_in_optimizer_params_and_state requires "
                           f"swapin_optim_state['state'] to be keyed only by packed parameter "
                           f"ids from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict,
                                       swapin_optim_state: dict):
    """Inside the block the optimizer's groups hold ``swapin_parameters`` (in
    ``param_groups`` order) with the hyperparameters and per-parameter state of
    ``swapin_optim_state`` (an ``optimizer.state_dict()``); in-place updates of that state's
    tensors are kept, the optimizer's own groups and state are restored on exit."""
    state, infos = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict = defaultdict(dict)
        for live, swap, params in infos:
            live["params"] = params
            for k, v in swap.items():
                if k != "params":
                    live[k] = v
            for p, pid in zip(params, swap["params"]):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snap in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snap)
        optimizer.state = original_state
