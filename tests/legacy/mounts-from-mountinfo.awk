# mountinfo (proc(5)) to the /proc/mounts form, as the kernel writes both:
# "SOURCE TARGET FSTYPE OPTIONS 0 0", the options being the mount's rw/ro, the
# rest of the per-mount options, then the file system's own options.
{
	for (sep = 7; $sep != "-"; sep++)
		;
	n = split($6, vfs, ",")
	m = split($(sep + 3), fs, ",")
	opts = vfs[1]
	for (i = 2; i <= n; i++)
		opts = opts "," vfs[i]
	for (i = 2; i <= m; i++)
		opts = opts "," fs[i]
	print $(sep + 2), $5, $(sep + 1), opts, 0, 0
}
