// topology: being written
