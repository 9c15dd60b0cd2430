"""``autograd.functional``: jacobian, hessian, vjp, jvp, hvp, vhp (filled in below)."""
