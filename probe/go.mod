module betaportprobe

go 1.26
