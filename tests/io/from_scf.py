#!/usr/bin/env python3
"""scripts/to_input_h5.from_scf on PySCF objects.

    from_scf.py CISOLVE SCRATCH_DIR

- an RHF object, all orbitals, and a CAS (ncas=4, nelecas=4): cisolve's energy on the file
  equals PySCF's (FCI and mcscf.CASCI on the same orbitals) to 1e-9 Eh;
- ncas without nelecas is refused (ValueError naming nelecas): nothing is guessed;
- a UHF object is refused with a TypeError that says why, not numpy's shape error;
and none of the refusals leaves a file.
"""
import os
import subprocess
import sys

from pyscf import fci, gto, mcscf, scf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from to_input_h5 import from_scf  # noqa: E402

failures = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def cisolve_energy(exe, path):
    out = subprocess.run([exe, "--device", "cpu", "--quiet", "--output", os.devnull, path],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    return float(out.split()[0])


def refused(exc_type, needle, path, **kw):
    try:
        from_scf(path=path, **kw)
    except exc_type as exc:
        return needle in str(exc) and not os.path.exists(path)
    except Exception as exc:  # noqa: BLE001 - any other error is the finding
        print("  raised %s: %s" % (type(exc).__name__, exc))
        return False
    return False


def main():
    exe, scratch = sys.argv[1], sys.argv[2]
    mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", basis="sto-3g",
                verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)

    full = os.path.join(scratch, "from_scf_full.h5")
    from_scf(mf, full)
    e_ref = fci.FCI(mf).kernel()[0]
    e = cisolve_energy(exe, full)
    check(abs(e - e_ref) < 1e-9, "all orbitals: cisolve %.12f, PySCF FCI %.12f" % (e, e_ref))

    cas = os.path.join(scratch, "from_scf_cas.h5")
    from_scf(mf, cas, ncas=4, nelecas=4)
    e_ref = mcscf.CASCI(mf, 4, 4).kernel()[0]
    e = cisolve_energy(exe, cas)
    check(abs(e - e_ref) < 1e-9, "CAS(4,4): cisolve %.12f, PySCF CASCI %.12f" % (e, e_ref))

    check(refused(ValueError, "nelecas", os.path.join(scratch, "from_scf_nonelecas.h5"),
                  mf=mf, ncas=4), "ncas without nelecas is refused, naming nelecas")
    uhf = scf.UHF(mol).run()
    check(refused(TypeError, "unrestricted", os.path.join(scratch, "from_scf_uhf.h5"), mf=uhf),
          "a UHF object is refused with a TypeError that says why")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
