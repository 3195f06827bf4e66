#!/usr/bin/env bash
# Installs the system packages the tests use for real components (and
# python3-pandas for one live pandas check). Idempotent;
# quiet when everything is already there.
set -euo pipefail
need=()
for pair in slurmctld:slurm-wlm slurmd:slurm-wlm munged:munge sshd:openssh-server ssh:openssh-client ssh-keygen:openssh-client chromium:chromium; do
	bin=${pair%%:*} pkg=${pair#*:}
	command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || need+=("$pkg")
done
# Debian's pandas, for the one test that reads an export with pandas live
# (heldjobs TestTrackingPandas; every other pandas check is a committed
# golden). It skips with a message where pandas is absent.
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pandas' >/dev/null 2>&1 || need+=(python3-pandas)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then echo "install-deps: not root; cannot install ${need[*]} (tests needing them will skip)"; exit 0; fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $(printf '%s\n' "${need[@]}" | sort -u) >/dev/null
fi
