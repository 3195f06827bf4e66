#!/usr/bin/env bash
# Installs the Debian packages CI needs: the real components the tests use
# (Slurm and munge, sshd and the ssh client, Chromium, git), qemu user-mode
# emulation for the arm64 tests (qemu-user, binfmt-support), curl for
# scripts/fetch-testdata.sh, and pandas for the one test that reads an export
# with pandas live (every other Python check is a committed golden).
# Idempotent; quiet when everything is there. Not root: it says what is
# missing, and fails under CI=true (tests would fail for it anyway).
set -euo pipefail
need=()
for pair in slurmctld:slurm-wlm slurmd:slurm-wlm munged:munge sshd:openssh-server ssh:openssh-client \
	ssh-keygen:openssh-client chromium:chromium git:git setsid:util-linux curl:curl \
	qemu-aarch64:qemu-user update-binfmts:binfmt-support; do
	bin=${pair%%:*} pkg=${pair#*:}
	command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || need+=("$pkg")
done
{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pandas' >/dev/null 2>&1; } || need+=(python3-pandas)
[ ${#need[@]} -eq 0 ] && exit 0
pkgs=$(printf '%s\n' "${need[@]}" | sort -u | tr '\n' ' ')
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: not root; cannot install $pkgs"
	case "${CI:-}" in true | 1) exit 1 ;; esac
	exit 0
fi
echo "install-deps: installing $pkgs"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
