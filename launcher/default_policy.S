/* The built-in default policy (paddock(1): "no --policy") is the agent
 * policy, embedded byte for byte so that its digest matches the file. */
	.section .rodata
	.global paddock_default_policy
	.global paddock_default_policy_end
paddock_default_policy:
	.incbin "contrib/policies/agent.json"
paddock_default_policy_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
