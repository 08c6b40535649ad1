"""Small parts every other part uses: colours, text that fits, steady updates, threads, start-up guards."""
