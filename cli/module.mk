# SPDX-License-Identifier: Apache-2.0
# iobatchctl (cli/): one file per verb, main.c dispatches.  `plan` (plan_verb.c)
# links the batcher's job-file plan (batcher/jobfile.c: offline, no agent;
# not libagent);
# calibrate.c is the calibration verb.
iobatchctl_SRCS := cli/main.c cli/args.c cli/status.c cli/plan_verb.c cli/profiles_verb.c cli/ctl.c cli/calibrate.c \
	cli/check.c cli/annotations_verb.c
PROGRAMS += bin/iobatchctl
INSTALL_PROGRAMS += bin/iobatchctl
$(eval $(call prog,bin/iobatchctl,$(iobatchctl_SRCS),agentcore agentclient batch ttrpc proto common))
