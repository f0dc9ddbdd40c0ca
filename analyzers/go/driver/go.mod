module benchsmith.invalid/gotype

go 1.18
