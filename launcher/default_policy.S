/* The built-in policies, embedded byte for byte so that each digest matches
 * its file. The default (paddock(1): "no --policy") is the agent policy;
 * the others are the built-in profiles that --policy NAME and "extends"
 * name (launcher/supervisor/profiles.c). */
	.section .rodata
	.global paddock_default_policy
	.global paddock_default_policy_end
paddock_default_policy:
	.incbin "contrib/policies/agent.json"
paddock_default_policy_end:
	.byte 0
	.global paddock_profile_agent_net
	.global paddock_profile_agent_net_end
paddock_profile_agent_net:
	.incbin "contrib/policies/agent-net.json"
paddock_profile_agent_net_end:
	.byte 0
	.global paddock_profile_build
	.global paddock_profile_build_end
paddock_profile_build:
	.incbin "contrib/policies/build.json"
paddock_profile_build_end:
	.byte 0
	.global paddock_profile_minimal
	.global paddock_profile_minimal_end
paddock_profile_minimal:
	.incbin "contrib/policies/minimal.json"
paddock_profile_minimal_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
