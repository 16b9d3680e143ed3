// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {Owned} from "../lib/Owned.sol";

/// @notice Devnet stand-in for a Chainlink aggregator: the owner posts answers.
contract TestPriceFeed is Owned {
    uint8 public immutable decimals;
    uint80 private round;
    int256 private answer;
    uint256 private updatedAt;

    constructor(address initialOwner, uint8 decimals_) Owned(initialOwner) {
        decimals = decimals_;
    }

    function post(int256 newAnswer, uint256 at) external onlyOwner {
        round += 1;
        answer = newAnswer;
        updatedAt = at;
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return (round, answer, updatedAt, updatedAt, round);
    }
}
